from service.cli.entry import main

main()
