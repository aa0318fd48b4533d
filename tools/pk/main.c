/* The pk command (commands.c has its dispatch). */
#include "cli.h"

int main(int argc, char **argv)
{
    return pk_cli(argc, argv, PK_CLI_RUN);
}
