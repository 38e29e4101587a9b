from pbem.entry import run

run()
