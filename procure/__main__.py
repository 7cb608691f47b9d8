from procure.cli import main

main()
