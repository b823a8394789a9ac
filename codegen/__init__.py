"""libops code generator: ops/native_functions.yaml -> C sources in the build tree.

model.py parses and validates the schema once into typed objects (its parts:
model_types.py, grammar.py, yaml_input.py, entries.py, kernel_scan.py; dtypes.py is
the `dtypes:` key); derivatives.py checks ops/derivatives.yaml against it; each gen_*.py renders one artifact from
its template in templates/; gen.py is the command line meson runs.
"""
