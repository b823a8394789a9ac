/* meta.c: in progress */
