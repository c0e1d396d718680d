"""The language server (`tfproc-lint server`): a front end over the engine for editors.

Only this package imports pygls and lsprotocol (the `server` extra); the linter itself does not
depend on them. Entry point: `tfproc_lint.server.app.serve`.
"""
