"""mmtasks' tests: a regular package, so that `import tests.chat_server` finds this folder even when an
installed distribution ships a top-level `tests` package of its own (latex2sympy2 does): a namespace package
loses to any regular one on sys.path."""
