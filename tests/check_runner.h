/* The runners' glue (tests/check_runner.c): a program's `main`, renamed by its wrapper
 * (tests/check_program.c.in), called with the arguments it takes.
 *
 * A program's main is `int main(void)` or `int main(int argc, char **argv)`; _Generic
 * picks, by the function's type, the helper that calls it that way. */
#ifndef TESTS_CHECK_RUNNER_H
#define TESTS_CHECK_RUNNER_H

static inline int
check_call_main0(int (*f)(void), int argc, char **argv)
{
    (void)argc;
    (void)argv;
    return f();
}

static inline int
check_call_main2(int (*f)(int, char **), int argc, char **argv)
{
    return f(argc, argv);
}

#define CHECK_RUN_MAIN(f, argc, argv) \
    _Generic(&(f), int (*)(void): check_call_main0, default: check_call_main2)(&(f), (argc), (argv))

#endif /* TESTS_CHECK_RUNNER_H */
