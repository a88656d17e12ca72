from service.cli.main import app

app()
