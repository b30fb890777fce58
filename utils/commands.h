/* SPDX-License-Identifier: BSD-3-Clause */
/* Entry points of the subcommands, one file each under utils/. */
#ifndef MPXKIT_COMMANDS_H
#define MPXKIT_COMMANDS_H

int cmd_eval(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_unpack(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_simt(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_analyze(int argc, char **argv);

#endif
