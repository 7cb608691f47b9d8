from procure.front import main

main()
