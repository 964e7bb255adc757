/*===- main.c - Embedding the DISC runtime in a C program (c_api.h only) ---===*
 *
 * usage: embed_c MODEL.so SHAPE...
 *
 * Loads a model compiled by disc-compile, creates one float32 input per
 * SHAPE ("2x4", "scalar" for rank 0), in signature order, runs it and prints
 * every output. Element k (row-major) of input i holds
 * ((k + 3*i) mod 7 - 3) / 4, as in examples/embed_cpp. A wrong count, dtype
 * or shape is reported by the runtime with a message naming the input.
 *
 * Build against an installed runtime with pkg-config:
 *   cc -std=c11 main.c $(pkg-config --cflags --libs disc-runtime) -o embed_c
 *
 *===----------------------------------------------------------------------===*/

#include "disc/runtime/c_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANK 8

/* Parses "2x4" (or "scalar") into dims; returns the rank or -1. */
static int parse_shape(const char *text, int64_t *dims) {
  if (strcmp(text, "scalar") == 0)
    return 0;
  int rank = 0;
  const char *p = text;
  while (*p) {
    char *end;
    long long d = strtoll(p, &end, 10);
    if (end == p || d < 0 || rank == MAX_RANK || (*end && *end != 'x'))
      return -1;
    dims[rank++] = d;
    p = *end ? end + 1 : end;
  }
  return rank;
}

static int fail(const char *what, disc_status_code rc) {
  fprintf(stderr, "error: %s: %s: %s\n", what, disc_status_code_name(rc),
          disc_last_error_message());
  return rc == DISC_STATUS_RESOURCE_EXHAUSTED ? 3 : 2;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL.so SHAPE...\n", argv[0]);
    return 2;
  }
  disc_executable_t *exe = NULL;
  disc_status_code rc = disc_executable_load(argv[1], &exe);
  if (rc != DISC_STATUS_OK)
    return fail("load", rc);

  disc_session_options_t options = {.memory_limit_bytes = 0}; /* no limit */
  disc_session_t *session = NULL;
  rc = disc_session_create(exe, &options, &session);
  if (rc != DISC_STATUS_OK)
    return fail("session", rc);
  /* The outputs a run returns (a training step keeps its state updates). */
  int64_t num_outputs = disc_executable_num_run_outputs(exe);

  int num_inputs = argc - 2;
  disc_tensor_t **inputs = calloc((size_t)num_inputs + 1, sizeof(void *));
  for (int i = 0; i < num_inputs; ++i) {
    int64_t dims[MAX_RANK];
    int rank = parse_shape(argv[i + 2], dims);
    if (rank < 0) {
      fprintf(stderr, "error: bad shape '%s' (expected e.g. 2x4)\n",
              argv[i + 2]);
      return 2;
    }
    int64_t n = 1;
    for (int d = 0; d < rank; ++d)
      n *= dims[d];
    float *data = malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    for (int64_t k = 0; k < n; ++k)
      data[k] = (float)((k + 3 * i) % 7 - 3) / 4;
    rc = disc_tensor_create(DISC_DTYPE_FLOAT32, dims, rank, data, &inputs[i]);
    free(data); /* disc_tensor_create copied it */
    if (rc != DISC_STATUS_OK)
      return fail("input", rc);
  }

  disc_tensor_t **outputs = calloc((size_t)num_outputs + 1, sizeof(void *));
  rc = disc_session_run(session, inputs, num_inputs, outputs, num_outputs);
  if (rc != DISC_STATUS_OK)
    return fail("run", rc);

  for (int64_t i = 0; i < num_outputs; ++i) {
    disc_tensor_t *out = outputs[i];
    printf("output '%s': %s [", disc_executable_run_output_name(exe, i),
           disc_dtype_name(disc_tensor_dtype(out)));
    for (int64_t d = 0; d < disc_tensor_rank(out); ++d)
      printf("%s%lld", d ? ", " : "", (long long)disc_tensor_shape(out)[d]);
    printf("] values:");
    int64_t n = disc_tensor_num_elements(out);
    if (disc_tensor_dtype(out) == DISC_DTYPE_FLOAT32) {
      const float *v = disc_tensor_data(out);
      for (int64_t k = 0; k < n && k < 16; ++k)
        printf(" %g", v[k]);
    }
    printf("\n");
    disc_tensor_destroy(out);
  }
  disc_session_stats_t stats;
  disc_session_get_stats(session, &stats);
  printf("peak_bytes=%lld\n", (long long)stats.peak_bytes);

  for (int i = 0; i < num_inputs; ++i)
    disc_tensor_destroy(inputs[i]);
  disc_session_destroy(session);
  disc_executable_release(exe);
  free(inputs);
  free(outputs);
  return 0;
}
