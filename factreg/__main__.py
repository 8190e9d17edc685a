from factreg.cli import main

main()
