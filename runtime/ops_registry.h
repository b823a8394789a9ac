/* ops_registry.h: in progress (codegen owner) */
