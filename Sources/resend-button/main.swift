import ResendApp
