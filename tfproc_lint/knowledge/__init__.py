"""What the linter and the guard know about the libraries' APIs, as plain data: which calls start
TensorFlow's runtime, which objects are runtime state, which calls start processes, the engines,
the environment variables, the package roots and the remedies.

A leaf: it imports neither LibCST nor anything else of tfproc_lint, so the runtime guard (which
never imports the linter) shares it. tests/test_api_knowledge*.py check it against the installed
libraries.
"""
