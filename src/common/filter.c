/* SPDX-License-Identifier: MIT */
/*
 * filter.c - event filters in the kernel's grammar (filter.h; docs/tracefs.md section 4).
 *
 * Compiling goes as the kernel's parser does, so that the same text fails the same way:
 *   1. a first pass over the text checks its quotes and parentheses (the kernel's ENOENT,
 *      EPERM and ESRCH errors come from there, at the offending character) and counts the
 *      predicates (none: EINVAL without a message);
 *   2. a second pass, left to right: "(" and "!" open a group or invert what follows, then a
 *      predicate, then "&&", "||", ")" or the end; anything else is "Too many terms".  Each
 *      level keeps its OR of ANDs, so && binds tighter than ||.  Errors inside a predicate are
 *      at one past the offending column, as the kernel reports them.
 * The tree is then laid out as the program: predicates in the order of the text, each
 * saying where to go on a match and on a miss (the next predicate to try, or the result),
 * found with an explicit stack: text nested thousands deep compiles without deep recursion.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "filter.h"
#include "grow.h"
#include "number.h"
#include "format-field.h"

#define MAX_STRING 255	/* a quoted string's longest (256+: "Operand too long") */
#define MAX_NUMBER 23	/* a number's longest (24+: "Operand too long") */
#define RESULT_FALSE (-1)
#define RESULT_TRUE (-2)

enum op { OP_EQ, OP_NE, OP_LE, OP_GE, OP_LT, OP_GT, OP_BAND, OP_GLOB };
/* In the order they are tried: "<=" before "<". */
static const char *const op_text[] = { "==", "!=", "<=", ">=", "<", ">", "&", "~" };

enum pred_kind {
	PRED_NUMBER,  /* a field of 1, 2, 4 or 8 bytes against a number */
	PRED_CPU,     /* the recording CPU against a number */
	PRED_IN_SET,  /* a CPU number (the recording one, or a field's) in CPUS{...} */
	PRED_STRING,  /* a string field (or COMM) against a pattern */
	PRED_NEVER,   /* accepted, never matches */
};

enum source { SRC_FIELD, SRC_CPU, SRC_COMM };

enum match { MATCH_FULL, MATCH_FRONT, MATCH_MIDDLE, MATCH_END, MATCH_GLOB };

struct pred;
/*
 * What a predicate runs: for numbers, one function per size, sign and operator (what most
 * filters are made of), else one for its kind.
 */
typedef bool (*match_fn)(const struct usertp__filter *f, const struct pred *p,
			 const struct usertp__filter_record *rec);

struct pred {
	match_fn match_fn;
	unsigned char kind, op, size, is_signed, match, src;
	unsigned char type; /* the field's enum usertp__filter_type */
	bool invert;	    /* the result is inverted ("!=", "~" with "!...", a "!" before it) */
	unsigned int offset;
	uint64_t value;
	unsigned int pattern, pattern_len; /* in the program's strings */
	unsigned int set;		   /* in the program's CPU sets (PRED_IN_SET) */
	int on_match, on_miss;		   /* the next predicate, or RESULT_* */
};

struct usertp__filter {
	struct usertp__filter_head head; /* nr, uses_cpu: first (filter.h) */
	unsigned int nr_cpus; /* bits of each set */
	struct pred *preds;
	char *strings;
	uint64_t *sets;
};


/* --- fields ------------------------------------------------------------------------------ */

static const struct usertp__filter_field common_fields[] = {
	{ "common_type", 0, 2, false, USERTP__FILTER_NUMBER },
	{ "common_flags", 2, 1, false, USERTP__FILTER_NUMBER },
	{ "common_preempt_count", 3, 1, false, USERTP__FILTER_NUMBER },
	{ "common_pid", 4, 4, true, USERTP__FILTER_NUMBER },
};

/* A field found by name: the event's, then the pseudo-fields, then the common ones. */
struct found {
	const struct usertp__filter_field *field; /* NULL for a pseudo-field */
	enum source src;
	bool never; /* STACKTRACE: the parser takes it, it means nothing here */
	bool any;   /* usertp__filter_check(): a field of any type */
};

/* usertp__filter_check()'s fields: none, and any name is one. */
static const struct usertp__filter_field any_field[1] = { { "", 8, 8, true, USERTP__FILTER_NUMBER } };
#define ANY_FIELDS ((unsigned int)-1)

static bool name_is(const char *name, size_t len, const char *what)
{
	return strlen(what) == len && !memcmp(name, what, len);
}

static bool find_field(const struct usertp__filter_field *fields, unsigned int nr, const char *name,
		       size_t len, struct found *f)
{
	memset(f, 0, sizeof(*f));
	if (nr == ANY_FIELDS) {
		f->field = &any_field[0];
		f->any = true;
		return true;
	}
	for (unsigned int i = 0; i < nr; i++)
		if (name_is(name, len, fields[i].name)) {
			f->field = &fields[i];
			return true;
		}
	if (name_is(name, len, "CPU") || name_is(name, len, "cpu") || name_is(name, len, "common_cpu")) {
		f->src = SRC_CPU;
		return true;
	}
	if (name_is(name, len, "COMM") || name_is(name, len, "comm")) {
		f->src = SRC_COMM;
		return true;
	}
	if (name_is(name, len, "STACKTRACE") || name_is(name, len, "stacktrace")) {
		f->src = SRC_CPU;
		f->never = true;
		return true;
	}
	for (unsigned int i = 0; i < sizeof(common_fields) / sizeof(common_fields[0]); i++)
		if (name_is(name, len, common_fields[i].name)) {
			f->field = &common_fields[i];
			return true;
		}
	return false;
}

static bool is_string(const struct found *f)
{
	return f->src == SRC_COMM || f->any ||
	       (f->field && (f->field->type == USERTP__FILTER_CHARS ||
			     f->field->type == USERTP__FILTER_DATA_LOC ||
			     f->field->type == USERTP__FILTER_REL_LOC));
}

enum usertp__filter_type usertp__filter_type_of(const char *type)
{
	bool chars = strstr(type, "char") != NULL;

	if (strstr(type, "__data_loc"))
		return chars ? USERTP__FILTER_DATA_LOC : USERTP__FILTER_OTHER;
	if (strstr(type, "__rel_loc"))
		return chars ? USERTP__FILTER_REL_LOC : USERTP__FILTER_OTHER;
	if (strchr(type, '['))
		return chars ? USERTP__FILTER_CHARS : USERTP__FILTER_OTHER;
	return USERTP__FILTER_NUMBER;
}

int usertp__filter_fields_of_format(const char *format, struct usertp__filter_field **out,
				    char **names)
{
	struct usertp__filter_field *fields = NULL;
	size_t names_len = 0, names_cap = 0, pos = 0, len;
	unsigned int nr = 0, cap = 0;
	char *text = NULL;
	const char *line;

	*out = NULL;
	*names = NULL;
	while ((line = usertp__format_next_field_line(format, &pos, &len))) {
		struct usertp__format_field ff;
		size_t name_len;

		if (usertp__format_field_parse(line, len, &ff) || !strncmp(ff.name, "common_", 7))
			continue;
		name_len = strlen(ff.name);
		if (!usertp__grow((void **)&fields, &cap, nr + 1, sizeof(*fields)))
			goto nomem;
		if (names_len + name_len + 1 > names_cap) {
			size_t c = names_cap ? names_cap * 2 : 256;
			char *more;

			while (c < names_len + name_len + 1)
				c *= 2;
			more = realloc(text, c);
			if (!more)
				goto nomem;
			text = more;
			names_cap = c;
		}
		memcpy(text + names_len, ff.name, name_len + 1);
		/* The name is an offset until text stops moving. */
		fields[nr++] = (struct usertp__filter_field){ (const char *)(uintptr_t)names_len,
							      ff.offset, ff.size, ff.is_signed,
							      usertp__filter_type_of(ff.type) };
		names_len += name_len + 1;
	}
	if (!nr && !strstr(format, "format:")) {
		free(fields);
		free(text);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < nr; i++)
		fields[i].name = text + (uintptr_t)fields[i].name;
	*out = fields;
	*names = text;
	return (int)nr;
nomem:
	free(fields);
	free(text);
	return -ENOMEM;
}

/* --- building ---------------------------------------------------------------------------- */

/* A node of the expression's tree: a predicate, or an AND / OR of two nodes. */
enum node_kind { NODE_PRED, NODE_AND, NODE_OR };

struct node {
	unsigned char kind;
	bool invert;
	int left, right; /* nodes; NODE_PRED: left is the predicate */
};

/* One level of parentheses while parsing: its OR of ANDs so far. */
struct level {
	int or_node, and_node; /* -1: none yet */
	bool invert;	       /* a "!" before its "(" */
	int open;	       /* where its "(" is */
};

struct build {
	const char *text;
	struct usertp__filter_error *err;
	struct pred *preds;
	unsigned int nr_preds, cap_preds;
	struct node *nodes;
	unsigned int nr_nodes, cap_nodes;
	char *strings;
	size_t strings_len, strings_cap;
	uint64_t *sets;
	unsigned int nr_sets, cap_sets, nr_cpus;
};

static int fail(struct build *b, int err, const char *msg, int pos)
{
	*b->err = (struct usertp__filter_error){ err, msg, pos };
	return err;
}


static int add_node(struct build *b, enum node_kind kind, int left, int right)
{
	if (!usertp__grow((void **)&b->nodes, &b->cap_nodes, b->nr_nodes + 1, sizeof(*b->nodes)))
		return -ENOMEM;
	b->nodes[b->nr_nodes] = (struct node){ (unsigned char)kind, false, left, right };
	return (int)b->nr_nodes++;
}

/* Keep @len bytes of pattern; return where, or -1. */
static long add_string(struct build *b, const char *s, size_t len)
{
	size_t at = b->strings_len;

	if (b->strings_len + len + 1 > b->strings_cap) {
		size_t cap = b->strings_cap ? b->strings_cap * 2 : 256;
		char *more;

		while (cap < b->strings_len + len + 1)
			cap *= 2;
		more = realloc(b->strings, cap);
		if (!more)
			return -1;
		b->strings = more;
		b->strings_cap = cap;
	}
	memcpy(b->strings + at, s, len);
	b->strings[at + len] = 0;
	b->strings_len += len + 1;
	return (long)at;
}

/* --- values ------------------------------------------------------------------------------ */

/* The kernel's kstrtoull(s, 0) (number.c), of a value token (no '+' or newline reaches it). */
static bool parse_unsigned(const char *s, uint64_t *out)
{
	return !usertp__kstrtoull(s, strlen(s), 0, out);
}

/* kstrtoll(s, 0): a leading '-', then as above, within the range of a signed 64-bit. */
static bool parse_signed(const char *s, uint64_t *out)
{
	uint64_t v;

	if (s[0] == '-') {
		if (!parse_unsigned(s + 1, &v) || v > (uint64_t)INT64_MAX + 1)
			return false;
		*out = (uint64_t)0 - v;
		return true;
	}
	if (!parse_unsigned(s, &v) || v > (uint64_t)INT64_MAX)
		return false;
	*out = v;
	return true;
}

/* "0-3,5": the CPUs into a new set.  Return: the set's index, -1 (not a list), -2 (memory). */
static int parse_cpus(struct build *b, const char *s, size_t len)
{
	unsigned int words = (b->nr_cpus + 63) / 64, k;
	uint64_t *set;
	size_t i = 0;
	bool any = false;

	if (!usertp__grow((void **)&b->sets, &b->cap_sets, (b->nr_sets + 1) * words, sizeof(*b->sets)))
		return -2;
	set = b->sets + (size_t)b->nr_sets * words;
	memset(set, 0, words * sizeof(*set));
	while (i < len) {
		unsigned long lo = 0, hi;
		size_t start = i;

		while (i < len && isdigit((unsigned char)s[i]) && lo < 100000)
			lo = lo * 10 + (unsigned long)(s[i++] - '0');
		if (i == start)
			return -1;
		hi = lo;
		if (i < len && s[i] == '-') {
			start = ++i;
			hi = 0;
			while (i < len && isdigit((unsigned char)s[i]) && hi < 100000)
				hi = hi * 10 + (unsigned long)(s[i++] - '0');
			if (i == start || hi < lo)
				return -1;
		}
		if (hi >= b->nr_cpus)
			return -1;
		for (k = (unsigned int)lo; k <= hi; k++)
			set[k / 64] |= 1ull << (k % 64);
		any = true;
		if (i < len && s[i] != ',')
			return -1;
		i += i < len;
	}
	if (!any)
		return -1;
	return (int)b->nr_sets++;
}

static bool pred_match(const struct usertp__filter *f, const struct pred *p,
		       const struct usertp__filter_record *rec);

/* --- numeric predicates: one function per size, sign and operator ---------------------- */

#define NUMBER_FN(name, type, expr)                                                                \
	static bool name(const struct usertp__filter *f, const struct pred *p,                     \
			 const struct usertp__filter_record *rec)                                  \
	{                                                                                          \
		type v, w = (type)p->value;                                                        \
                                                                                                   \
		(void)f;                                                                           \
		if (p->offset + sizeof(v) > rec->size)                                             \
			return false;                                                              \
		memcpy(&v, (const unsigned char *)rec->data + p->offset, sizeof(v));               \
		return expr;                                                                       \
	}
#define NUMBER_FNS(suffix, type)                                                                   \
	NUMBER_FN(eq_##suffix, type, v == w)                                                       \
	NUMBER_FN(le_##suffix, type, v <= w)                                                       \
	NUMBER_FN(ge_##suffix, type, v >= w)                                                       \
	NUMBER_FN(lt_##suffix, type, v < w)                                                        \
	NUMBER_FN(gt_##suffix, type, v > w)                                                        \
	NUMBER_FN(band_##suffix, type, (v & w) != 0)
NUMBER_FNS(u8, uint8_t)
NUMBER_FNS(s8, int8_t)
NUMBER_FNS(u16, uint16_t)
NUMBER_FNS(s16, int16_t)
NUMBER_FNS(u32, uint32_t)
NUMBER_FNS(s32, int32_t)
NUMBER_FNS(u64, uint64_t)
NUMBER_FNS(s64, int64_t)

/* By size (1, 2, 4, 8 as 0..3), sign, and operator ("!=" is "==" inverted). */
#define NUMBER_ROW(suffix) { eq_##suffix, eq_##suffix, le_##suffix, ge_##suffix, lt_##suffix, \
			     gt_##suffix, band_##suffix }
static const match_fn number_fns[4][2][7] = {
	{ NUMBER_ROW(u8), NUMBER_ROW(s8) },
	{ NUMBER_ROW(u16), NUMBER_ROW(s16) },
	{ NUMBER_ROW(u32), NUMBER_ROW(s32) },
	{ NUMBER_ROW(u64), NUMBER_ROW(s64) },
};

/* --- predicates -------------------------------------------------------------------------- */

/*
 * The predicate at @at of the text.  Return: its length, or a negative errno (with b->err
 * set).  Positions in errors are one past the column, as the kernel's parse_pred() gives.
 */
static int parse_pred(struct build *b, const struct usertp__filter_field *fields, unsigned int nr,
		      int at, struct pred *p)
{
	const char *s = b->text;
	int i = at, op, vstart;
	struct found f;

	memset(p, 0, sizeof(*p));
	while (isalnum((unsigned char)s[i]) || s[i] == '_')
		i++;
	if (i == at)
		return fail(b, -EPERM, NULL, 0); /* not a predicate: no message */
	if (!find_field(fields, nr, s + at, (size_t)(i - at), &f))
		return fail(b, -EINVAL, "Field not found", i + 1);
	while (isspace((unsigned char)s[i]))
		i++;
	if (s[i] == '.' && f.any) {
		/* (A suffix: for the event's fields to say.) */
		for (i++; isalnum((unsigned char)s[i]) || s[i] == '_'; i++)
			;
		while (isspace((unsigned char)s[i]))
			i++;
	}
	/*
	 * .function and .ustring read the kernel's memory: nothing here has them.  Refused
	 * where the kernel refuses them on a field they do not fit: past the value.
	 */
	if (s[i] == '.') {
		for (i++; isalnum((unsigned char)s[i]) || s[i] == '_'; i++)
			;
		while (isspace((unsigned char)s[i]))
			i++;
		while (s[i] && strchr("=!<>&~", s[i]))
			i++;
		while (isspace((unsigned char)s[i]))
			i++;
		if (s[i] == '\'' || s[i] == '"') {
			const char *end = strchr(s + i + 1, s[i]);

			i = end ? (int)(end - s) + 1 : (int)strlen(s);
		} else {
			for (i += s[i] == '-'; isalnum((unsigned char)s[i]) || s[i] == '_'; i++)
				;
		}
		return fail(b, -EINVAL, "Illegal operation for field type", i + 1);
	}
	for (op = 0; op < (int)(sizeof(op_text) / sizeof(op_text[0])); op++)
		if (!strncmp(s + i, op_text[op], strlen(op_text[op])))
			break;
	if (op == (int)(sizeof(op_text) / sizeof(op_text[0])))
		return fail(b, -EINVAL, "Invalid operator", i + 1);
	i += (int)strlen(op_text[op]);
	while (isspace((unsigned char)s[i]))
		i++;
	vstart = i;
	p->op = (unsigned char)op;
	p->src = (unsigned char)f.src;
	if (f.field) {
		p->offset = f.field->offset;
		p->size = (unsigned char)(f.field->size <= 255 ? f.field->size : 0);
		p->is_signed = f.field->is_signed;
		p->type = (unsigned char)f.field->type;
	}
	if (s[i] == '\'' || s[i] == '"') {
		const char *end = strchr(s + i + 1, s[i]);
		const char *pat;
		size_t len;
		long where;

		if (op != OP_EQ && op != OP_NE && op != OP_GLOB)
			return fail(b, -EINVAL, "Illegal operation for field type", i + 1);
		if (!is_string(&f))
			return fail(b, -EINVAL, "Expecting numeric field", i + 1);
		if (!end) /* (the first pass saw to that) */
			return fail(b, -ESRCH, "Missing matching quote", i);
		len = (size_t)(end - (s + i + 1));
		if (len > MAX_STRING)
			return fail(b, -EINVAL, "Operand too long", (int)(end - s) + 1);
		pat = s + i + 1;
		p->kind = PRED_STRING;
		p->invert = op == OP_NE;
		p->match = MATCH_FULL;
		if (op == OP_GLOB) {
			/* The kernel's glob rules: "!" first negates, a digit first is literal. */
			if (len && pat[0] == '!') {
				p->invert = true;
				pat++;
				len--;
			}
			if (len && !isdigit((unsigned char)pat[0])) {
				for (size_t k = 0; k < len; k++) {
					if (pat[k] == '*') {
						if (k == 0) {
							p->match = MATCH_END;
						} else if (k == len - 1) {
							p->match = p->match == MATCH_END ? MATCH_MIDDLE
											 : MATCH_FRONT;
							break;
						} else {
							p->match = MATCH_GLOB;
							break;
						}
					} else if (strchr("[?\\", pat[k])) {
						p->match = MATCH_GLOB;
						break;
					}
				}
				/* The stars the match kind stands for are not part of the text. */
				if (p->match == MATCH_END || p->match == MATCH_MIDDLE) {
					pat++;
					len--;
				}
				if (p->match == MATCH_FRONT || p->match == MATCH_MIDDLE)
					len--;
			}
		}
		where = add_string(b, pat, len);
		if (where < 0)
			return fail(b, -ENOMEM, NULL, 0);
		p->pattern = (unsigned int)where;
		p->pattern_len = (unsigned int)len;
		i = (int)(end - s) + 1;
	} else if (s[i] == 'C' && !strncmp(s + i, "CPUS", 4)) {
		const char *close;
		int set;

		if ((is_string(&f) && !f.any) || (op != OP_EQ && op != OP_NE && op != OP_BAND))
			return fail(b, -EINVAL, "Illegal operation for field type", i + 1);
		if (s[i + 4] != '{')
			return fail(b, -EINVAL, "Missing '{'", i + 5);
		close = strchr(s + i + 5, '}');
		if (!close)
			return fail(b, -EINVAL, "Missing '}'", i + 5);
		set = parse_cpus(b, s + i + 5, (size_t)(close - (s + i + 5)));
		if (set == -2)
			return fail(b, -ENOMEM, NULL, 0);
		if (set < 0)
			return fail(b, -EINVAL, "Invalid cpulist", (int)(close - s) + 1);
		/* A field's number is read as its type: 1, 2, 4 or 8 bytes; others match nothing. */
		p->kind = f.src == SRC_CPU || p->size == 1 || p->size == 2 || p->size == 4 ||
					  p->size == 8
				  ? PRED_IN_SET
				  : PRED_NEVER;
		p->set = (unsigned int)set;
		p->invert = op == OP_NE;
		i = (int)(close - s) + 1;
	} else if (isdigit((unsigned char)s[i]) || s[i] == '-') {
		char num[MAX_NUMBER + 1];
		bool ok;

		if (is_string(&f) && !f.any)
			return fail(b, -EINVAL, "Expecting string field", i + 1);
		if (op == OP_GLOB && !f.any)
			return fail(b, -EINVAL, "Illegal operation for field type", i + 1);
		i += s[i] == '-';
		while (isalnum((unsigned char)s[i]))
			i++;
		if (i - vstart > MAX_NUMBER)
			return fail(b, -EINVAL, "Operand too long", i + 1);
		memcpy(num, s + vstart, (size_t)(i - vstart));
		num[i - vstart] = 0;
		ok = p->is_signed || f.src == SRC_CPU ? parse_signed(num, &p->value)
						      : parse_unsigned(num, &p->value);
		if (!ok)
			return fail(b, -EINVAL, "Illegal integer value", vstart + 1);
		if (f.src == SRC_CPU) {
			p->kind = PRED_CPU;
		} else if (p->size == 1 || p->size == 2 || p->size == 4 || p->size == 8) {
			p->kind = PRED_NUMBER;
			p->match_fn = number_fns[p->size == 1 ? 0 : p->size == 2 ? 1 : p->size == 4 ? 2 : 3]
						[p->is_signed ? 1 : 0][op];
			/* The literal as the field's type: its size, its sign. */
			if (p->size < 8) {
				uint64_t mask = (1ull << (p->size * 8)) - 1;

				p->value &= mask;
				if (p->is_signed && (p->value >> (p->size * 8 - 1)))
					p->value |= ~mask;
			}
		} else {
			p->kind = PRED_NEVER;
		}
		p->invert = op == OP_NE;
	} else {
		return fail(b, -EINVAL, "Invalid value (did you forget quotes)?", i + 1);
	}
	if (f.never || (p->kind == PRED_CPU && op == OP_BAND) || p->type == USERTP__FILTER_OTHER)
		p->kind = PRED_NEVER;
	if (p->kind != PRED_NUMBER)
		p->match_fn = pred_match;
	return i - at;
}

/* --- the expression ---------------------------------------------------------------------- */

/*
 * The first pass: quotes and parentheses, as the kernel's calc_stack(), and whether there is
 * anything that could be a predicate.  Return: 0, or a negative errno.
 */
static int first_pass(struct build *b)
{
	const char *s = b->text;
	int depth = 0, last_quote = 0, *opens, ret = 0;
	char quote = 0;
	bool in_pred = false, any = false;
	size_t len = strlen(s);

	opens = malloc((len + 1) * sizeof(*opens));
	if (!opens)
		return fail(b, -ENOMEM, NULL, 0);
	for (size_t i = 0; s[i]; i++) {
		if (quote) {
			if (s[i] == quote)
				quote = 0;
			continue;
		}
		if (isspace((unsigned char)s[i]))
			continue;
		switch (s[i]) {
		case '\'':
		case '"':
			quote = s[i];
			last_quote = (int)i;
			break;
		case '|':
		case '&':
			if (s[i + 1] != s[i])
				break;
			i++;
			in_pred = false;
			continue;
		case '(':
			in_pred = false;
			opens[depth++] = (int)i;
			continue;
		case ')':
			in_pred = false;
			if (!depth) {
				ret = fail(b, -EPERM, "Too few '('", (int)i);
				goto out;
			}
			depth--;
			continue;
		}
		if (!in_pred)
			any = in_pred = true;
	}
	if (quote)
		ret = fail(b, -ESRCH, "Missing matching quote", last_quote);
	else if (depth)
		ret = fail(b, -ENOENT, "Too many '('", opens[depth - 1]);
	else if (!any)
		ret = fail(b, -EINVAL, NULL, 0);
out:
	free(opens);
	return ret;
}

/* A finished level (or term) into the level above it. */
static int level_value(struct build *b, const struct level *l)
{
	int n = l->and_node;

	if (l->or_node >= 0)
		n = add_node(b, NODE_OR, l->or_node, l->and_node);
	return n;
}

static int add_term(struct build *b, struct level *l, int term)
{
	if (l->and_node >= 0)
		term = add_node(b, NODE_AND, l->and_node, term);
	if (term < 0)
		return term;
	l->and_node = term;
	return 0;
}

/* The second pass: the tree.  Return: its root node, or a negative errno. */
static int parse_expr(struct build *b, const struct usertp__filter_field *fields, unsigned int nr)
{
	const char *s = b->text;
	size_t len = strlen(s);
	struct level *levels = malloc((len + 2) * sizeof(*levels));
	int depth = 0, at = 0, ret, last_op = -1;
	bool invert = false;

	if (!levels)
		return fail(b, -ENOMEM, NULL, 0);
	levels[0] = (struct level){ -1, -1, false, 0 };
	for (;;) {
		struct pred p;
		int n;

		/* A term: "(", "!", a predicate. */
		while (isspace((unsigned char)s[at]))
			at++;
		if (!s[at])
			break;
		if (s[at] == '(') {
			levels[++depth] = (struct level){ -1, -1, invert, at };
			invert = false;
			at++;
			continue;
		}
		if (s[at] == '!' && s[at + 1] != '=') {
			invert = !invert;
			at++;
			continue;
		}
		ret = parse_pred(b, fields, nr, at, &p);
		if (ret < 0)
			goto out;
		at += ret;
		if (!usertp__grow((void **)&b->preds, &b->cap_preds, b->nr_preds + 1, sizeof(*b->preds)) ||
		    (n = add_node(b, NODE_PRED, (int)b->nr_preds, -1)) < 0) {
			ret = fail(b, -ENOMEM, NULL, 0);
			goto out;
		}
		b->preds[b->nr_preds++] = p;
		b->nodes[n].invert = invert;
		invert = false;
		if (add_term(b, &levels[depth], n)) {
			ret = fail(b, -ENOMEM, NULL, 0);
			goto out;
		}
		last_op = -1;
		/* Then: ")" (any number), "&&", "||", or the end. */
		for (;;) {
			while (isspace((unsigned char)s[at]))
				at++;
			if (!s[at])
				break;
			if (s[at] == ')') {
				/* (The first pass saw that every ")" has its "(".) */
				n = level_value(b, &levels[depth]);
				if (n < 0) {
					ret = fail(b, -ENOMEM, NULL, 0);
					goto out;
				}
				b->nodes[n].invert ^= levels[depth].invert;
				depth--;
				if (add_term(b, &levels[depth], n)) {
					ret = fail(b, -ENOMEM, NULL, 0);
					goto out;
				}
				at++;
				continue;
			}
			if ((s[at] == '&' || s[at] == '|') && s[at + 1] == s[at]) {
				last_op = at;
				if (s[at] == '|') {
					struct level *l = &levels[depth];

					l->or_node = level_value(b, l);
					l->and_node = -1;
					if (l->or_node < 0) {
						ret = fail(b, -ENOMEM, NULL, 0);
						goto out;
					}
				}
				at += 2;
				break;
			}
			ret = fail(b, -EPERM, "Too many terms in predicate expression", at);
			goto out;
		}
		if (!s[at])
			break;
	}
	if (!b->nr_preds) {
		ret = fail(b, -EINVAL, "No filter found", at);
	} else if (last_op >= 0) {
		/* "a == 1 &&": the kernel takes it; its selftests say it must not. */
		ret = fail(b, -EINVAL, "Meaningless filter expression", last_op);
	} else {
		/* A group left open is the first pass's error; what is left is level 0. */
		ret = level_value(b, &levels[0]);
		if (ret < 0)
			ret = fail(b, -ENOMEM, NULL, 0);
	}
out:
	free(levels);
	return ret;
}

/*
 * Lay the tree out: each predicate's targets on a match and on a miss.  A node is entered
 * with where to go when it is true and when it is false; AND(l, r) sends l's true to r and
 * its false to the AND's false; OR(l, r) sends l's false to r; "!" swaps the two.  Targets
 * are "the first predicate of node N", resolved once all are placed.
 */
static int lay_out(struct build *b, int root)
{
	struct work {
		int node;
		int on_true, on_false; /* RESULT_*, or the encoded node (-3 - node) */
	} *stack = malloc((b->nr_nodes + 1) * sizeof(*stack));
	int *first = malloc((b->nr_nodes + 1) * sizeof(*first));
	unsigned int top = 0, placed = 0;

	if (!stack || !first) {
		free(stack);
		free(first);
		return fail(b, -ENOMEM, NULL, 0);
	}
	stack[top++] = (struct work){ root, RESULT_TRUE, RESULT_FALSE };
	while (top) {
		struct work w = stack[--top];
		const struct node *n = &b->nodes[w.node];
		int t = n->invert ? w.on_false : w.on_true, f = n->invert ? w.on_true : w.on_false;

		first[w.node] = (int)placed; /* (a node's first predicate is placed next) */
		if (n->kind == NODE_PRED) {
			/* Predicates are placed in the order of the text: left subtrees first. */
			b->preds[placed].on_match = t;
			b->preds[placed].on_miss = f;
			placed++;
			continue;
		}
		/* The right one after the left one: pushed first. */
		stack[top++] = (struct work){ n->right, t, f };
		if (n->kind == NODE_AND)
			stack[top++] = (struct work){ n->left, -3 - n->right, f };
		else
			stack[top++] = (struct work){ n->left, t, -3 - n->right };
	}
	for (unsigned int i = 0; i < placed; i++) {
		if (b->preds[i].on_match <= -3)
			b->preds[i].on_match = first[-3 - b->preds[i].on_match];
		if (b->preds[i].on_miss <= -3)
			b->preds[i].on_miss = first[-3 - b->preds[i].on_miss];
	}
	free(stack);
	free(first);
	return 0;
}

int usertp__filter_compile(const char *text, const struct usertp__filter_field *fields,
			   unsigned int nr_fields, struct usertp__filter **out,
			   struct usertp__filter_error *err)
{
	struct build b = { .text = text, .err = err };
	struct usertp__filter *f = NULL;
	size_t preds_size, words;
	int root, ret;

	*out = NULL;
	*err = (struct usertp__filter_error){ 0, NULL, 0 };
	if (strlen(text) > USERTP__FILTER_MAX)
		return fail(&b, -EINVAL, NULL, 0);
	b.nr_cpus = (unsigned int)get_nprocs_conf();
	if (!b.nr_cpus)
		b.nr_cpus = 1;
	ret = first_pass(&b);
	if (!ret) {
		root = parse_expr(&b, fields, nr_fields);
		ret = root < 0 ? root : lay_out(&b, root);
	}
	if (ret)
		goto out;
	/* One block: the predicates, the patterns, the CPU sets. */
	words = (b.nr_cpus + 63) / 64;
	preds_size = b.nr_preds * sizeof(struct pred);
	f = malloc(sizeof(*f) + preds_size + b.nr_sets * words * sizeof(uint64_t) + b.strings_len + 1);
	if (!f) {
		ret = fail(&b, -ENOMEM, NULL, 0);
		goto out;
	}
	f->head.nr = b.nr_preds;
	f->nr_cpus = b.nr_cpus;
	f->head.uses_cpu = false;
	for (unsigned int i = 0; i < b.nr_preds; i++)
		f->head.uses_cpu |= b.preds[i].src == SRC_CPU && b.preds[i].kind != PRED_NEVER;
	f->preds = (struct pred *)(f + 1);
	memcpy(f->preds, b.preds, preds_size);
	f->sets = (uint64_t *)((char *)f->preds + preds_size);
	if (b.nr_sets)
		memcpy(f->sets, b.sets, b.nr_sets * words * sizeof(uint64_t));
	f->strings = (char *)(f->sets + b.nr_sets * words);
	if (b.strings_len)
		memcpy(f->strings, b.strings, b.strings_len);
	*out = f;
out:
	free(b.preds);
	free(b.nodes);
	free(b.strings);
	free(b.sets);
	return ret;
}

void usertp__filter_free(struct usertp__filter *f)
{
	free(f);
}

int usertp__filter_check(const char *text, struct usertp__filter_error *err)
{
	struct usertp__filter *f;
	int ret = usertp__filter_compile(text, NULL, ANY_FIELDS, &f, err);

	usertp__filter_free(f);
	return ret;
}

/* --- evaluation -------------------------------------------------------------------------- */

static inline __attribute__((always_inline)) uint64_t load(const unsigned char *p, unsigned int size,
							   bool is_signed)
{
	switch (size) {
	case 1: {
		uint8_t v = *p;

		return is_signed ? (uint64_t)(int64_t)(int8_t)v : v;
	}
	case 2: {
		uint16_t v;

		memcpy(&v, p, 2);
		return is_signed ? (uint64_t)(int64_t)(int16_t)v : v;
	}
	case 4: {
		uint32_t v;

		memcpy(&v, p, 4);
		return is_signed ? (uint64_t)(int64_t)(int32_t)v : v;
	}
	default: {
		uint64_t v;

		memcpy(&v, p, 8);
		return v;
	}
	}
}

static inline __attribute__((always_inline)) bool compare(unsigned int op, uint64_t a, uint64_t b,
							  bool is_signed)
{
	switch (op) {
	case OP_EQ:
	case OP_NE: /* (inverted by the predicate) */
		return a == b;
	case OP_BAND:
		return (a & b) != 0;
	}
	if (is_signed) {
		int64_t x = (int64_t)a, y = (int64_t)b;

		return op == OP_LT ? x < y : op == OP_LE ? x <= y : op == OP_GT ? x > y : x >= y;
	}
	return op == OP_LT ? a < b : op == OP_LE ? a <= b : op == OP_GT ? a > b : a >= b;
}

/* The kernel's glob: *, ?, [...] (with ! or ^ to negate, a-z ranges), \ escapes. */
static bool glob(const char *p, const char *pend, const char *s, const char *send)
{
	const char *star = NULL, *star_s = NULL;

	while (s < send) {
		if (p < pend && *p == '*') {
			star = ++p;
			star_s = s;
			continue;
		}
		if (p < pend && *p == '[') {
			const char *q = p + 1;
			bool neg = q < pend && (*q == '!' || *q == '^'), hit = false;

			q += neg;
			for (bool first = true; q < pend && (first || *q != ']'); first = false) {
				unsigned char lo = (unsigned char)*q, hi = lo;

				if (q + 2 < pend && q[1] == '-' && q[2] != ']') {
					hi = (unsigned char)q[2];
					q += 2;
				}
				hit |= (unsigned char)*s >= lo && (unsigned char)*s <= hi;
				q++;
			}
			if (q < pend && hit != neg) {
				p = q + 1;
				s++;
				continue;
			}
		} else if (p < pend && (*p == '?' || (*p == '\\' && p + 1 < pend ? p[1] == *s
									      : *p == *s))) {
			/* "?", an escaped character, or a character: one of the string's. */
			p += *p == '\\' && p + 1 < pend ? 2 : 1;
			s++;
			continue;
		}
		if (!star)
			return false;
		p = star;
		s = ++star_s;
	}
	while (p < pend && *p == '*')
		p++;
	return p == pend;
}

static bool string_match(const struct usertp__filter *f, const struct pred *p, const char *s,
			 size_t len)
{
	const char *pat = f->strings + p->pattern;
	size_t plen = p->pattern_len;

	switch (p->match) {
	case MATCH_FULL:
		/* (An empty pattern matches nothing, as in the kernel; "*" matches everything.) */
		return plen && len == plen && !memcmp(s, pat, plen);
	case MATCH_FRONT:
		return len >= plen && !memcmp(s, pat, plen);
	case MATCH_END:
		return len >= plen && !memcmp(s + len - plen, pat, plen);
	case MATCH_MIDDLE:
		return memmem(s, len, pat, plen) != NULL;
	default:
		return glob(pat, pat + plen, s, s + len);
	}
}

/* The string a predicate looks at, within the record; false if it is not there. */
static bool string_of(const struct pred *p, const struct usertp__filter_record *rec,
		      const char **s, size_t *len)
{
	const unsigned char *d = rec->data;
	uint32_t loc;
	size_t at;

	if (p->src == SRC_COMM) {
		*s = rec->comm ? rec->comm : "";
		*len = strnlen(*s, 16);
		return true;
	}
	if (p->type == USERTP__FILTER_CHARS) {
		if ((size_t)p->offset + p->size > rec->size)
			return false;
		*s = (const char *)d + p->offset;
		*len = strnlen(*s, p->size);
		return true;
	}
	/* (In size_t: a format's offsets are anything a program wrote.) */
	if ((size_t)p->offset + 4 > rec->size)
		return false;
	memcpy(&loc, d + p->offset, 4);
	at = (loc & 0xffff) + (p->type == USERTP__FILTER_REL_LOC ? (size_t)p->offset + 4 : 0);
	if (at + (loc >> 16) > rec->size)
		return false;
	*s = (const char *)d + at;
	*len = strnlen(*s, loc >> 16);
	return true;
}

static bool pred_match(const struct usertp__filter *f, const struct pred *p,
		       const struct usertp__filter_record *rec)
{
	const char *s;
	size_t len;
	uint64_t v;

	switch (p->kind) {
	case PRED_NUMBER:
		return p->match_fn(f, p, rec);
	case PRED_CPU:
		return compare(p->op, rec->cpu, p->value, true);
	case PRED_IN_SET:
		if (p->src == SRC_CPU) {
			v = rec->cpu;
		} else {
			if ((size_t)p->offset + p->size > rec->size ||
			    (p->size != 1 && p->size != 2 && p->size != 4 && p->size != 8))
				return false;
			v = load((const unsigned char *)rec->data + p->offset, p->size, p->is_signed);
		}
		return v < f->nr_cpus &&
		       (f->sets[(size_t)p->set * ((f->nr_cpus + 63) / 64) + v / 64] >> (v % 64)) & 1;
	case PRED_STRING:
		return string_of(p, rec, &s, &len) && string_match(f, p, s, len);
	default:
		return false;
	}
}

bool usertp__filter_match(const struct usertp__filter *f, const struct usertp__filter_record *rec)
{
	int i = 0;

	if (!f || !f->head.nr)
		return true;
	for (;;) {
		const struct pred *p = &f->preds[i];
		int next = p->match_fn(f, p, rec) != p->invert ? p->on_match : p->on_miss;

		if (next < 0)
			return next == RESULT_TRUE;
		i = next; /* always forward: the loop ends */
	}
}

/* --- errors as tracefs shows them -------------------------------------------------------- */

int usertp__filter_error_file(const char *text, const struct usertp__filter_error *err, char *buf,
			      size_t size)
{
	int col = err->pos < (int)strlen(text) ? err->pos : (int)strlen(text);

	if (!err->msg)
		return snprintf(buf, size, "%s\nError: (0)\n\n", text);
	return snprintf(buf, size, "%s\n%*s^\nparse_error: %s\n\n", text, col, "", err->msg);
}

int usertp__filter_error_log(const char *text, const struct usertp__filter_error *err, char *buf,
			     size_t size)
{
	return snprintf(buf, size, "  Command: %s\n%*s^\n", text, 11 + err->pos, "");
}
