/* ops_dispatch.h: in progress (iterator owner) */
