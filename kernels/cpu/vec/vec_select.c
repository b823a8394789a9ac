/* ops_vec(): the vector loops of the level the runtime chose (docs/cpu-dispatch.md).
 * Compiled once, at the baseline level; it only picks a table. */
#include "kernels/cpu/vec/vec.h"
#include "ops_cpu_level.h"

const ops_vec_table *
ops_vec(void)
{
#if defined(__x86_64__)
    static const ops_vec_table *const tables[OPS_CPU_NUM_LEVELS] = {
        [OPS_CPU_LEVEL_DEFAULT] = &ops_vec_table_default,
        [OPS_CPU_LEVEL_AVX2] = &ops_vec_table_avx2,
        [OPS_CPU_LEVEL_AVX512] = &ops_vec_table_avx512,
    };
    return tables[ops_cpu_level_get()];
#else
    return &ops_vec_table_default;
#endif
}
