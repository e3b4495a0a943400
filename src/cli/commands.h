/* SPDX-License-Identifier: GPL-2.0 */
/* One function per subcommand (one file each: cmd_<name>.c). argv[0] is the command name.
 * Each returns the process exit status. */
#ifndef SNAP_CLI_COMMANDS_H
#define SNAP_CLI_COMMANDS_H

int snap_cmd_run(int argc, char **argv);    /* cmd_run.c */
int snap_cmd_attach(int argc, char **argv); /* cmd_attach.c */
int snap_cmd_decode(int argc, char **argv); /* cmd_decode.c */
int snap_cmd_dump(int argc, char **argv);   /* cmd_dump.c */
int snap_cmd_doctor(int argc, char **argv); /* cmd_doctor.c */
int snap_cmd_serve(int argc, char **argv);  /* cmd_serve.c */
int snap_cmd_report(int argc, char **argv); /* cmd_report.c */

#endif
