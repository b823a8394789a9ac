/* alloc.c: in progress */
