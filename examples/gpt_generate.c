/* Load a GPT-2-style decoder from a safetensors file and generate text greedily, with
 * libops' C API: the weights are views of the mapped file (no copy).
 *
 *     gpt_generate WEIGHTS.safetensors [--prompt TEXT] [--tokens N] [--save OUT.npz]
 *
 * The file is what `examples/tiny_gpt.py train` writes (make run does): a character-level
 * model whose `__metadata__` holds its configuration (n_layer, n_head, n_embd, n_ctx) and
 * its vocabulary (the characters, in token order).  The network is GPT-2's with its
 * LayerNorms before each sublayer:
 *
 *     x = wte[tokens] + wpe[positions]
 *     for each block:  x += proj(causal_attention(ln_1(x)))
 *                      x += fc2(gelu(fc(ln_2(x))))
 *     logits = ln_f(x) @ wte^T                          (the output head tied to wte)
 *
 * Each step runs the whole window (at most n_ctx tokens) and takes the argmax of the
 * last position's logits.  --save writes the final window's tokens and the logits of
 * every position to a .npz, which `examples/tiny_gpt.py check` compares with a NumPy
 * forward of the same weights (make check-install does). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libops/libops.h>

enum { MAX_TOKENS = 4096, MAX_TEMPS = 64 };

static const ops_device CPU = OPS_DEVICE_CPU;

static void
die(const char *what)
{
    fprintf(stderr, "gpt_generate: %s: %s\n", what, ops_last_error());
    exit(1);
}

/* The intermediate tensors of one forward, released together by temps_release. */
typedef struct temps {
    ops_tensor *t[MAX_TEMPS * 8];
    int n;
} temps;

static ops_tensor *
keep(temps *tp, ops_tensor *t, const char *what)
{
    if (t == NULL)
        die(what);
    if (tp->n == (int)(sizeof tp->t / sizeof tp->t[0])) {
        fprintf(stderr, "gpt_generate: too many temporaries\n");
        exit(1);
    }
    tp->t[tp->n++] = t;
    return t;
}

static void
temps_release(temps *tp)
{
    for (int i = 0; i < tp->n; i++)
        ops_tensor_release(tp->t[i]);
    tp->n = 0;
}

typedef struct model {
    ops_tensor_dict *weights;
    int64_t n_layer, n_head, n_embd, n_ctx, vocab_size;
    char vocab[256];
} model;

static const ops_tensor *
weight(const model *m, const char *name)
{
    const ops_tensor *t = ops_tensor_dict_get(m->weights, name);
    if (t == NULL) {
        fprintf(stderr, "gpt_generate: the weights have no tensor '%s'\n", name);
        exit(1);
    }
    return t;
}

static const ops_tensor *
block_weight(const model *m, int64_t layer, const char *name)
{
    char buf[128];
    snprintf(buf, sizeof buf, "h.%lld.%s", (long long)layer, name);
    return weight(m, buf);
}

static int64_t
meta_int(const model *m, const char *key)
{
    const char *v = ops_tensor_dict_metadata_get(m->weights, key);
    char *end;
    const long long x = v ? strtoll(v, &end, 10) : 0;
    if (v == NULL || *end != 0 || x <= 0) {
        fprintf(stderr, "gpt_generate: the weights' metadata has no positive integer '%s'\n", key);
        exit(1);
    }
    return x;
}

static void
model_load(model *m, const char *path)
{
    if (ops_safetensors_load(path, &m->weights) != OPS_OK)
        die("loading the weights");
    m->n_layer = meta_int(m, "n_layer");
    m->n_head = meta_int(m, "n_head");
    m->n_embd = meta_int(m, "n_embd");
    m->n_ctx = meta_int(m, "n_ctx");
    const char *vocab = ops_tensor_dict_metadata_get(m->weights, "vocab");
    if (vocab == NULL || strlen(vocab) == 0 || strlen(vocab) >= sizeof m->vocab) {
        fprintf(stderr, "gpt_generate: the weights' metadata has no vocabulary of 1 to 255 characters\n");
        exit(1);
    }
    strcpy(m->vocab, vocab);
    m->vocab_size = (int64_t)strlen(vocab);
    if (ops_tensor_size(weight(m, "wte.weight"), 0) != m->vocab_size || m->n_embd % m->n_head != 0) {
        fprintf(stderr, "gpt_generate: wte.weight does not match the vocabulary, or n_embd %% n_head != 0\n");
        exit(1);
    }
}

static ops_tensor *
layer_norm(temps *tp, const model *m, const ops_tensor *x, const char *prefix, int64_t layer)
{
    char w[96], b[96];
    if (layer >= 0) {
        snprintf(w, sizeof w, "%s.weight", prefix);
        snprintf(b, sizeof b, "%s.bias", prefix);
        return keep(tp, ops_layer_norm(x, OPS_INTS(m->n_embd), block_weight(m, layer, w), block_weight(m, layer, b),
                                       1e-5, false),
                    "layer_norm");
    }
    snprintf(w, sizeof w, "%s.weight", prefix);
    snprintf(b, sizeof b, "%s.bias", prefix);
    return keep(tp, ops_layer_norm(x, OPS_INTS(m->n_embd), weight(m, w), weight(m, b), 1e-5, false), "layer_norm");
}

static ops_tensor *
linear(temps *tp, const model *m, const ops_tensor *x, int64_t layer, const char *name)
{
    char w[96], b[96];
    snprintf(w, sizeof w, "%s.weight", name);
    snprintf(b, sizeof b, "%s.bias", name);
    return keep(tp, ops_linear(x, block_weight(m, layer, w), block_weight(m, layer, b)), name);
}

/* Causal self-attention of x [T, C]: q, k, v [H, T, C/H] from one projection. */
static ops_tensor *
attention(temps *tp, const model *m, const ops_tensor *x, const ops_tensor *causal_mask, int64_t layer)
{
    const int64_t T = ops_tensor_size(x, 0), C = m->n_embd, H = m->n_head, D = C / H;
    ops_tensor *qkv = linear(tp, m, x, layer, "attn.c_attn");                                /* [T, 3C] */
    ops_tensor *heads = keep(tp, ops_reshape(qkv, OPS_INTS(T, 3, H, D)), "reshape");          /* [T,3,H,D] */
    ops_tensor *q = keep(tp, ops_transpose(keep(tp, ops_select(heads, 1, 0), "q"), 0, 1), "q"); /* [H,T,D] */
    ops_tensor *k = keep(tp, ops_transpose(keep(tp, ops_select(heads, 1, 1), "k"), 0, 1), "k");
    ops_tensor *v = keep(tp, ops_transpose(keep(tp, ops_select(heads, 1, 2), "v"), 0, 1), "v");
    ops_tensor *kt = keep(tp, ops_transpose(k, 1, 2), "k^T");                                 /* [H,D,T] */
    ops_tensor *scores = keep(tp, ops_matmul(q, kt), "q k^T");                                 /* [H,T,T] */
    ops_tensor *scaled = keep(tp, ops_mul_scalar(scores, OPS_SCALAR_FLOAT(1.0 / sqrt((double)D))), "scale");
    ops_tensor *masked =
        keep(tp, ops_masked_fill_scalar(scaled, causal_mask, OPS_SCALAR_FLOAT(-INFINITY)), "causal mask");
    ops_tensor *p = keep(tp, ops_softmax(masked, -1, OPS_DTYPE_NONE), "softmax");
    ops_tensor *y = keep(tp, ops_matmul(p, v), "p v");                                        /* [H,T,D] */
    ops_tensor *yt = keep(tp, ops_transpose(y, 0, 1), "transpose");                           /* [T,H,D] */
    ops_tensor *merged = keep(tp, ops_reshape(yt, OPS_INTS(T, C)), "merge heads");
    return linear(tp, m, merged, layer, "attn.c_proj");
}

/* The logits [T, vocab] of the tokens. */
static ops_tensor *
forward(temps *tp, const model *m, const int64_t *tokens, int64_t T)
{
    ops_tensor *idx = keep(tp, ops_tensor_from_data(tokens, OPS_INTS(T), OPS_INT64), "tokens");
    ops_tensor *pos = keep(tp, ops_arange(OPS_SCALAR_INT(T), OPS_INT64, CPU), "positions");
    ops_tensor *x = keep(tp,
                         ops_add(keep(tp, ops_embedding(weight(m, "wte.weight"), idx, -1, false, false), "wte"),
                                 keep(tp, ops_embedding(weight(m, "wpe.weight"), pos, -1, false, false), "wpe"),
                                 OPS_SCALAR_INT(1)),
                         "embeddings");
    /* mask[i, j] = j > i: the positions a token may not attend to */
    ops_tensor *ones = keep(tp, ops_ones(OPS_INTS(T, T), OPS_BOOL, CPU), "ones");
    ops_tensor *causal = keep(tp, ops_triu(ones, 1), "causal mask");
    for (int64_t l = 0; l < m->n_layer; l++) {
        ops_tensor *a = attention(tp, m, layer_norm(tp, m, x, "ln_1", l), causal, l);
        x = keep(tp, ops_add(x, a, OPS_SCALAR_INT(1)), "residual");
        ops_tensor *h = linear(tp, m, layer_norm(tp, m, x, "ln_2", l), l, "mlp.c_fc");
        h = linear(tp, m, keep(tp, ops_gelu(h, "none"), "gelu"), l, "mlp.c_proj");
        x = keep(tp, ops_add(x, h, OPS_SCALAR_INT(1)), "residual");
    }
    ops_tensor *xf = layer_norm(tp, m, x, "ln_f", -1);
    ops_tensor *wte_t = keep(tp, ops_t(weight(m, "wte.weight")), "wte^T");
    return keep(tp, ops_matmul(xf, wte_t), "logits");
}

static int64_t
token_of(const model *m, char c)
{
    const char *p = strchr(m->vocab, c);
    return p != NULL && c != 0 ? (int64_t)(p - m->vocab) : -1;
}

int
main(int argc, char **argv)
{
    const char *path = NULL, *prompt = "To be", *save = NULL;
    long ntok = 80;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--prompt") == 0 && i + 1 < argc)
            prompt = argv[++i];
        else if (strcmp(argv[i], "--tokens") == 0 && i + 1 < argc)
            ntok = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--save") == 0 && i + 1 < argc)
            save = argv[++i];
        else if (argv[i][0] != '-' && path == NULL)
            path = argv[i];
        else
            path = NULL, i = argc;
    }
    if (path == NULL || ntok < 1 || ntok > MAX_TOKENS / 2) {
        fprintf(stderr, "usage: gpt_generate WEIGHTS.safetensors [--prompt TEXT] [--tokens 1..%d] [--save OUT.npz]\n",
                MAX_TOKENS / 2);
        return 2;
    }
    ops_set_num_threads(1);
    model m = {0};
    model_load(&m, path);

    int64_t tokens[MAX_TOKENS];
    int64_t n = 0, n_prompt;
    for (const char *c = prompt; *c && n < MAX_TOKENS / 2; c++) {
        const int64_t t = token_of(&m, *c);
        if (t < 0) {
            fprintf(stderr, "gpt_generate: the prompt's character '%c' is not in the vocabulary\n", *c);
            return 1;
        }
        tokens[n++] = t;
    }
    if (n == 0) {
        fprintf(stderr, "gpt_generate: the prompt is empty\n");
        return 1;
    }
    n_prompt = n;
    printf("gpt_generate: %lld layers, %lld heads, %lld channels, context %lld, vocabulary %lld\n",
           (long long)m.n_layer, (long long)m.n_head, (long long)m.n_embd, (long long)m.n_ctx,
           (long long)m.vocab_size);
    printf("%s", prompt);
    temps tp = {0};
    for (long s = 0; s < ntok; s++) {
        const int64_t start = n > m.n_ctx ? n - m.n_ctx : 0;
        ops_tensor *logits = forward(&tp, &m, tokens + start, n - start);
        ops_tensor *last = keep(&tp, ops_select(logits, 0, n - start - 1), "last position");
        ops_scalar best;
        if (ops_tensor_item(keep(&tp, ops_argmax(last, NULL, false), "argmax"), &best) != OPS_OK)
            die("argmax");
        tokens[n++] = ops_scalar_to_int64(best);
        putchar(m.vocab[tokens[n - 1]]);
        fflush(stdout);
        temps_release(&tp);
    }
    putchar('\n');

    if (save != NULL) {
        /* the last window and its logits, for examples/tiny_gpt.py check; n_prompt is
         * where the generated tokens start in it, or -1 once the window has slid (the
         * earlier tokens were then chosen with a context the window no longer holds) */
        const int64_t start = n > m.n_ctx ? n - m.n_ctx : 0;
        const int64_t where = start == 0 ? n_prompt : -1;
        ops_tensor *logits = forward(&tp, &m, tokens + start, n - start);
        ops_tensor *tok = keep(&tp, ops_tensor_from_data(tokens + start, OPS_INTS(n - start), OPS_INT64), "tokens");
        ops_tensor *np = keep(&tp, ops_tensor_from_data(&where, OPS_INTS(), OPS_INT64), "n_prompt");
        ops_tensor_dict *out = ops_tensor_dict_new();
        if (out == NULL || ops_tensor_dict_set(out, "tokens", tok) != OPS_OK ||
            ops_tensor_dict_set(out, "logits", logits) != OPS_OK || ops_tensor_dict_set(out, "n_prompt", np) != OPS_OK ||
            ops_npz_save(save, out, false) != OPS_OK)
            die("saving the logits");
        ops_tensor_dict_free(out);
        temps_release(&tp);
    }
    ops_tensor_dict_free(m.weights);
    return 0;
}
