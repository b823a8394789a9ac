/* tensor.c: in progress */
