"""libops code generator: ops/native_functions.yaml -> C sources in the build tree.

model.py parses and validates the schema once into typed objects; derivatives.py
checks ops/derivatives.yaml against it; each gen_*.py renders one artifact from
its template in templates/; gen.py is the command line meson runs.
"""
