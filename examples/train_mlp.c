/* Train small models on the 8x8 handwritten digits that Debian's python3-sklearn ships
 * (sklearn/datasets/data/digits.csv.gz: 1797 images, 64 pixels in 0..16 and a label
 * per line), with libops' autograd and Adam.
 *
 *     train_mlp [--device cpu|cuda|cuda:N] [--model mlp|cnn|both] [path/to/digits.csv.gz]
 *
 * A fixed seed shuffles the images into 1437 for training and 360 held out. Two models,
 * each trained with cross-entropy for 30 epochs in batches of 64:
 *   - an MLP, 64 -> 64 (relu) -> 10;
 *   - a CNN, conv 3x3 (1 -> 8 channels, padding 1) -> relu -> 2x2 max pool -> 128 -> 10.
 * It prints the mean training loss per epoch and each model's held-out accuracy, and
 * exits 1 if any trained model is below 95%.
 *
 * --device (default cpu) trains on that device: the data and the parameters are made
 * on the cpu with the same seeded generator (so every device starts from the same
 * values and draws the same batches) and copied there once; only the losses and the
 * accuracy come back.  make gpu-check trains the MLP on cpu and on cuda and compares
 * the two.  --model (default both) trains one model only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <libops/libops.h>

enum { NIMG = 1797, NPIX = 64, NCLASS = 10, HIDDEN = 64, NTEST = 360, EPOCHS = 30, BATCH = 64 };

static const char *DEFAULT_PATH = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz";

static int
die(const char *what)
{
    fprintf(stderr, "train_mlp: %s: %s\n", what, ops_last_error());
    exit(1);
}

/* Checked op result: a NULL tensor ends the program with libops' message. */
static ops_tensor *
ok(ops_tensor *t, const char *what)
{
    if (t == NULL)
        die(what);
    return t;
}

static void
ok_st(ops_status st, const char *what)
{
    if (st != OPS_OK)
        die(what);
}

/* Reads the CSV: pixels scaled to [0, 1] into x[NIMG][NPIX], labels into y[NIMG]. */
static int
load_digits(const char *path, float *x, int64_t *y)
{
    gzFile f = gzopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "train_mlp: cannot open %s (install python3-sklearn, or pass the path)\n", path);
        return -1;
    }
    char line[1024];
    int n = 0;
    while (n < NIMG && gzgets(f, line, sizeof line) != NULL) {
        char *p = line;
        for (int j = 0; j <= NPIX; j++) {
            char *end;
            long v = strtol(p, &end, 10);
            if (end == p || (j < NPIX && *end != ',')) {
                fprintf(stderr, "train_mlp: %s: line %d is not 65 comma-separated integers\n", path, n + 1);
                gzclose(f);
                return -1;
            }
            if (j < NPIX)
                x[n * NPIX + j] = (float)v / 16.0f;
            else
                y[n] = v;
            p = end + 1;
        }
        n++;
    }
    gzclose(f);
    if (n != NIMG) {
        fprintf(stderr, "train_mlp: %s: expected %d images, read %d\n", path, NIMG, n);
        return -1;
    }
    return 0;
}

/* The device everything is trained on (--device). */
static ops_device train_device = {OPS_CPU, 0};

/* t on train_device: t itself on the cpu, else a copy there (t released). */
static ops_tensor *
on_device(ops_tensor *t)
{
    if (train_device.type == OPS_CPU)
        return t;
    ops_tensor *d = ok(ops_to_device(t, train_device, OPS_DTYPE_NONE, false, false, OPS_MEMORY_FORMAT_NONE),
                       "to device");
    ops_tensor_release(t);
    return d;
}

/* A parameter initialised uniformly in [-1/sqrt(fan_in), 1/sqrt(fan_in)] (PyTorch's
 * nn.Linear default) from the seeded generator. */
static ops_tensor *
param(ops_int_list shape, int64_t fan_in, ops_generator *gen)
{
    ops_tensor *p = ok(ops_empty(shape, OPS_FLOAT32, OPS_DEVICE_CPU, OPS_MEMORY_FORMAT_NONE), "empty");
    const double bound = 1.0 / sqrt((double)fan_in);
    ok_st(ops_uniform_(p, -bound, bound, gen), "uniform_");
    p = on_device(p); /* a leaf on train_device: moved before it requires grad */
    ok_st(ops_tensor_set_requires_grad(p, true), "requires_grad");
    return p;
}

/* MLP: logits = linear(relu(linear(x, w1, b1)), w2, b2) */
static ops_tensor *
forward_mlp(const ops_tensor *x, ops_tensor *const *params)
{
    ops_tensor *h = ok(ops_linear(x, params[0], params[1]), "linear 1");
    ops_tensor *a = ok(ops_relu(h), "relu");
    ops_tensor *logits = ok(ops_linear(a, params[2], params[3]), "linear 2");
    ops_tensor_release(h);
    ops_tensor_release(a);
    return logits;
}

/* CNN: x [B, 64] as [B, 1, 8, 8] -> conv2d (8 channels, 3x3, padding 1) -> relu ->
 * max_pool2d 2x2 -> [B, 8 * 4 * 4] -> linear -> logits */
static ops_tensor *
forward_cnn(const ops_tensor *x, ops_tensor *const *params)
{
    ops_tensor *img = ok(ops_reshape(x, OPS_INTS(-1, 1, 8, 8)), "reshape");
    ops_tensor *c = ok(ops_conv2d(img, params[0], params[1], OPS_INTS(1), OPS_INTS(1), OPS_INTS(1), 1), "conv2d");
    ops_tensor *a = ok(ops_relu(c), "relu");
    ops_tensor *p = ok(ops_max_pool2d(a, OPS_INTS(2), OPS_INTS(2), OPS_INTS(0), OPS_INTS(1), false), "max_pool2d");
    ops_tensor *f = ok(ops_flatten(p, 1, -1), "flatten");
    ops_tensor *logits = ok(ops_linear(f, params[2], params[3]), "linear");
    ops_tensor *tmp[] = {img, c, a, p, f};
    for (size_t i = 0; i < sizeof tmp / sizeof tmp[0]; i++)
        ops_tensor_release(tmp[i]);
    return logits;
}

typedef ops_tensor *(*model_fn)(const ops_tensor *x, ops_tensor *const *params);

/* Trains params with Adam on (x_train, y_train); returns the accuracy on (x_test, y_test). */
static double
train(const char *name, model_fn forward, ops_tensor *const *params, const ops_tensor *x_train,
      const ops_tensor *y_train, const ops_tensor *x_test, const ops_tensor *y_test, ops_generator *gen)
{
    const int64_t ntrain = ops_tensor_size(x_train, 0), ntest = ops_tensor_size(x_test, 0);
    ops_optimizer *opt = ops_adam_new((ops_tensor_list){(const ops_tensor *const *)params, 4},
                                      &(ops_adam_options){.lr = 1e-2});
    if (opt == NULL)
        die("adam");
    printf("%s: Adam, %d epochs of batches of %d\n", name, EPOCHS, BATCH);
    for (int epoch = 1; epoch <= EPOCHS; epoch++) {
        /* a new order of the training images every epoch */
        ops_tensor *order =
            on_device(ok(ops_randperm(ntrain, gen, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED), "randperm"));
        double total = 0;
        int batches = 0;
        for (int64_t start = 0; start < ntrain; start += BATCH) {
            const int64_t len = ntrain - start < BATCH ? ntrain - start : BATCH;
            ops_tensor *idx = ok(ops_narrow(order, 0, start, len), "narrow");
            ops_tensor *xb = ok(ops_index_select(x_train, 0, idx), "index_select");
            ops_tensor *yb = ok(ops_index_select(y_train, 0, idx), "index_select");
            ok_st(ops_optimizer_zero_grad(opt, true), "zero_grad");
            ops_tensor *logits = forward(xb, params);
            ops_tensor *loss = ok(ops_cross_entropy_loss(logits, yb, NULL, 1, -100, 0.0), "cross_entropy");
            ok_st(ops_backward(loss, NULL, false, false), "backward");
            ok_st(ops_optimizer_step(opt), "step");
            ops_scalar l;
            ok_st(ops_tensor_item(loss, &l), "item");
            total += l.v.f;
            batches++;
            ops_tensor_release(loss);
            ops_tensor_release(logits);
            ops_tensor_release(xb);
            ops_tensor_release(yb);
            ops_tensor_release(idx);
        }
        ops_tensor_release(order);
        printf("%s epoch %2d  loss %.4f\n", name, epoch, total / batches);
    }
    ops_optimizer_release(opt);

    /* held-out accuracy, without recording a graph */
    const bool prev = ops_set_grad_enabled(false);
    ops_tensor *logits = forward(x_test, params);
    ops_tensor *pred = ok(ops_argmax(logits, &(int64_t){1}, false), "argmax");
    ops_tensor *hit = ok(ops_eq(pred, y_test), "eq");
    ops_tensor *correct = ok(ops_sum(hit, OPS_DTYPE_NONE), "sum");
    ops_set_grad_enabled(prev);
    ops_scalar c;
    ok_st(ops_tensor_item(correct, &c), "item");
    const double accuracy = (double)c.v.i / (double)ntest;
    printf("%s held-out accuracy: %.1f%% (%lld of %lld)\n", name, 100 * accuracy, (long long)c.v.i,
           (long long)ntest);
    ops_tensor_release(correct);
    ops_tensor_release(hit);
    ops_tensor_release(pred);
    ops_tensor_release(logits);
    return accuracy;
}

static int
usage(void)
{
    fprintf(stderr, "usage: train_mlp [--device cpu|cuda|cuda:N] [--model mlp|cnn|both] [path/to/digits.csv.gz]\n");
    return 2;
}

int
main(int argc, char **argv)
{
    const char *path = DEFAULT_PATH, *model = "both";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            if (ops_device_parse(argv[++i], &train_device) != OPS_OK) {
                fprintf(stderr, "train_mlp: --device: %s\n", ops_last_error());
                return usage();
            }
        } else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
            model = argv[++i];
            if (strcmp(model, "mlp") != 0 && strcmp(model, "cnn") != 0 && strcmp(model, "both") != 0)
                return usage();
        } else if (argv[i][0] == '-' || i + 1 < argc) {
            return usage();
        } else {
            path = argv[i];
        }
    }
    const bool run_mlp = strcmp(model, "cnn") != 0, run_cnn = strcmp(model, "mlp") != 0;
    float *xs = malloc(sizeof(float) * NIMG * NPIX);
    int64_t *ys = malloc(sizeof(int64_t) * NIMG);
    if (xs == NULL || ys == NULL || load_digits(path, xs, ys) != 0)
        return 1;
    ops_tensor *x_all = ok(ops_tensor_from_data(xs, OPS_INTS(NIMG, NPIX), OPS_FLOAT32), "from_data");
    ops_tensor *y_all = ok(ops_tensor_from_data(ys, OPS_INTS(NIMG), OPS_INT64), "from_data");
    free(xs);
    free(ys);

    /* the split: a fixed permutation, the last NTEST images held out */
    ops_generator *gen = ops_generator_create(1234);
    ops_tensor *perm = ok(ops_randperm(NIMG, gen, OPS_DTYPE_NONE, OPS_DEVICE_UNSPECIFIED), "randperm");
    ops_tensor *train_idx = ok(ops_narrow(perm, 0, 0, NIMG - NTEST), "narrow");
    ops_tensor *test_idx = ok(ops_narrow(perm, 0, NIMG - NTEST, NTEST), "narrow");
    ops_tensor *x_train = ok(ops_index_select(x_all, 0, train_idx), "index_select");
    ops_tensor *y_train = ok(ops_index_select(y_all, 0, train_idx), "index_select");
    ops_tensor *x_test = ok(ops_index_select(x_all, 0, test_idx), "index_select");
    ops_tensor *y_test = ok(ops_index_select(y_all, 0, test_idx), "index_select");
    x_train = on_device(x_train);
    y_train = on_device(y_train);
    x_test = on_device(x_test);
    y_test = on_device(y_test);
    const int64_t ntrain = NIMG - NTEST;

    if (train_device.type == OPS_CPU) {
        printf("digits: %lld training images, %d held out\n", (long long)ntrain, NTEST);
    } else {
        char dev[32];
        printf("digits: %lld training images, %d held out, on %s\n", (long long)ntrain, NTEST,
               ops_device_str(train_device, dev, sizeof dev));
    }
    /* The MLP is drawn and trained first: with --model mlp it trains on exactly the
     * numbers of a full run. */
    ops_tensor *mlp[4] = {
        param(OPS_INTS(HIDDEN, NPIX), NPIX, gen), param(OPS_INTS(HIDDEN), NPIX, gen),
        param(OPS_INTS(NCLASS, HIDDEN), HIDDEN, gen), param(OPS_INTS(NCLASS), HIDDEN, gen)};
    const double acc_mlp =
        run_mlp ? train("MLP 64-64-10", forward_mlp, mlp, x_train, y_train, x_test, y_test, gen) : 1.0;
    ops_tensor *cnn[4] = {
        param(OPS_INTS(8, 1, 3, 3), 9, gen), param(OPS_INTS(8), 9, gen),
        param(OPS_INTS(NCLASS, 8 * 4 * 4), 8 * 4 * 4, gen), param(OPS_INTS(NCLASS), 8 * 4 * 4, gen)};
    const double acc_cnn =
        run_cnn ? train("CNN conv3x3x8-pool-10", forward_cnn, cnn, x_train, y_train, x_test, y_test, gen) : 1.0;
    for (int i = 0; i < 4; i++) {
        ops_tensor_release(mlp[i]);
        ops_tensor_release(cnn[i]);
    }
    ops_tensor *all[] = {x_all, y_all, perm, train_idx, test_idx, x_train, y_train, x_test, y_test};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        ops_tensor_release(all[i]);
    ops_generator_release(gen);
    return acc_mlp >= 0.95 && acc_cnn >= 0.95 ? 0 : 1;
}
