/* A dependency of probe.c, reached only through probe's local scope. */

int iotap_probe_dep_symbol(void) { return 42; }

/* Not a CUDA library, though it has a function of a CUDA name: the shim's
 * dlsym must hand this out unchanged. */
int cuMemcpyHtoD_v2(void) { return 7; }
