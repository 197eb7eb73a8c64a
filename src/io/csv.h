/* csv.h - tidy CSV tables (the results files of `mdsd table`): read a file
 * with a header row into strings, find columns by name, parse numbers with
 * errors that name the line and column, and write fields with RFC 4180
 * quoting. Fields may be quoted ("a,b" and "say ""hi"""); a line break inside
 * quotes is not supported. */
#ifndef MDSD_CSV_H
#define MDSD_CSV_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"

typedef struct {
    char path[4096];
    size_t n_cols;
    char **header;     /* [n_cols] column names */
    size_t n_rows;     /* data rows (blank lines skipped) */
    char **cells;      /* [n_rows * n_cols], row-major, "" for empty fields */
    size_t *line;      /* [n_rows] 1-based line number of each row in the file */
} mdsd_csv;

/* Reads the whole file; every row must have the header's number of fields. */
int mdsd_csv_read(const char *path, mdsd_csv **out, mdsd_err *err);
/* The same from an open stream; `path` names it in messages. */
int mdsd_csv_read_stream(FILE *f, const char *path, mdsd_csv **out, mdsd_err *err);
void mdsd_csv_free(mdsd_csv *t);

/* Index of the column called name, or -1. */
int mdsd_csv_col(const mdsd_csv *t, const char *name);
/* Cell (row, col). */
const char *mdsd_csv_cell(const mdsd_csv *t, size_t row, int col);
/* The cell as a number: "" (or "nan") gives NaN; anything not a number is an
 * error naming the file, line, column and text. */
int mdsd_csv_number(const mdsd_csv *t, size_t row, int col, double *out, mdsd_err *err);

/* Splits one line (no line ending) into malloc'd fields, undoing quoting;
 * free them with mdsd_csv_fields_free. Bad quoting is an error naming the
 * field. */
int mdsd_csv_split(const char *line, char ***fields, size_t *count, mdsd_err *err);
void mdsd_csv_fields_free(char **fields, size_t count);

/* Writes s as one field, quoted if it holds a comma, quote or line break. */
void mdsd_csv_write_field(FILE *f, const char *s);

#endif
