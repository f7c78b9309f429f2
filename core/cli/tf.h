/* `lode tf`: Mersenne trial factoring, GIMPS style (core/cli/tf.c). */
#ifndef LODE_CLI_TF_H
#define LODE_CLI_TF_H

/* argv[0] is "tf". Returns the process exit status. */
int cmd_tf(int argc, char **argv);

#endif
