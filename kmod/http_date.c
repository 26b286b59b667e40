// SPDX-License-Identifier: GPL-2.0
/*
 * HTTP dates (RFC 9110 5.6.7).
 *
 * Calendar arithmetic is Howard Hinnant's days_from_civil/civil_from_days:
 * exact for the proleptic Gregorian calendar with no tables and no loops.
 */
#include "http_date.h"

/* 9999-12-31 23:59:59, the last second with a four-digit year. */
#define KWEB_DT_MAX	253402300799LL
#define KWEB_DT_DAY	86400

static const char * const kweb_dt_wday[7] = {
	"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat",
};

static const char * const kweb_dt_wday_long[7] = {
	"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday",
	"Saturday",
};

static const char * const kweb_dt_mon[12] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

/* Days from 1970-01-01 to y-m-d; y may be anything from 0 to 9999. */
static s64 kweb_dt_days_from_civil(s64 y, unsigned int m, unsigned int d)
{
	s64 era, yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The inverse, for days >= 0 only. */
static void kweb_dt_civil_from_days(s64 z, s64 *y, unsigned int *m,
				    unsigned int *d)
{
	s64 era, doe, yoe, doy, mp;

	z += 719468;
	era = z / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (unsigned int)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned int)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static bool kweb_dt_leap(s64 y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static unsigned int kweb_dt_mdays(s64 y, unsigned int m)
{
	static const unsigned char mdays[12] = {
		31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31,
	};

	return mdays[m - 1] + (m == 2 && kweb_dt_leap(y));
}

static void kweb_dt_put(char *out, unsigned int v, int digits)
{
	while (digits--) {
		out[digits] = '0' + v % 10;
		v /= 10;
	}
}

void kweb_http_date_format(s64 t, char out[KWEB_HTTP_DATE_LEN + 1])
{
	s64 days, y;
	unsigned int m, d, sec;

	/* Last-Modified of a file from before 1970 or after 9999 is bogus. */
	if (t < 0)
		t = 0;
	if (t > KWEB_DT_MAX)
		t = KWEB_DT_MAX;
	days = t / KWEB_DT_DAY;
	sec = (unsigned int)(t % KWEB_DT_DAY);
	kweb_dt_civil_from_days(days, &y, &m, &d);

	/* "Sun, 06 Nov 1994 08:49:37 GMT" */
	memcpy(out, kweb_dt_wday[(days + 4) % 7], 3);
	memcpy(out + 3, ", ", 2);
	kweb_dt_put(out + 5, d, 2);
	out[7] = ' ';
	memcpy(out + 8, kweb_dt_mon[m - 1], 3);
	out[11] = ' ';
	kweb_dt_put(out + 12, (unsigned int)y, 4);
	out[16] = ' ';
	kweb_dt_put(out + 17, sec / 3600, 2);
	out[19] = ':';
	kweb_dt_put(out + 20, sec / 60 % 60, 2);
	out[22] = ':';
	kweb_dt_put(out + 23, sec % 60, 2);
	memcpy(out + 25, " GMT", 5);
}

/*
 * A cursor over the date being parsed. Once bad is set every helper does
 * nothing, so a parser can be written as a straight run of calls with a
 * single check at the end.
 */
struct kweb_dt_cur {
	const char *s;
	size_t len;
	size_t i;
	bool bad;
};

static void kweb_dt_lit(struct kweb_dt_cur *c, const char *lit)
{
	for (; !c->bad && *lit; lit++, c->i++)
		if (c->i >= c->len || c->s[c->i] != *lit)
			c->bad = true;
}

static unsigned int kweb_dt_num(struct kweb_dt_cur *c, int digits)
{
	unsigned int v = 0;

	for (; !c->bad && digits; digits--, c->i++) {
		if (c->i >= c->len || c->s[c->i] < '0' || c->s[c->i] > '9')
			c->bad = true;
		else
			v = v * 10 + (c->s[c->i] - '0');
	}
	return v;
}

/* Which of names[0..n) comes next, case-sensitively (RFC 9110 5.6.7). */
static unsigned int kweb_dt_name(struct kweb_dt_cur *c,
				 const char * const *names, unsigned int n)
{
	unsigned int k;
	size_t l;

	if (c->bad)
		return 0;
	for (k = 0; k < n; k++) {
		for (l = 0; names[k][l]; l++)
			if (c->i + l >= c->len || c->s[c->i + l] != names[k][l])
				break;
		if (!names[k][l]) {
			c->i += l;
			return k;
		}
	}
	c->bad = true;
	return 0;
}

static void kweb_dt_time(struct kweb_dt_cur *c, unsigned int *h,
			 unsigned int *mi, unsigned int *s)
{
	*h = kweb_dt_num(c, 2);
	kweb_dt_lit(c, ":");
	*mi = kweb_dt_num(c, 2);
	kweb_dt_lit(c, ":");
	*s = kweb_dt_num(c, 2);
}

int kweb_http_date_parse(const char *s, size_t len, s64 *t)
{
	struct kweb_dt_cur c = { .s = s, .len = len };
	unsigned int d, m, h, mi, sec;
	s64 y;

	if (len > 3 && s[3] == ',') {
		/* IMF-fixdate: "Sun, 06 Nov 1994 08:49:37 GMT" */
		kweb_dt_name(&c, kweb_dt_wday, 7);
		kweb_dt_lit(&c, ", ");
		d = kweb_dt_num(&c, 2);
		kweb_dt_lit(&c, " ");
		m = kweb_dt_name(&c, kweb_dt_mon, 12) + 1;
		kweb_dt_lit(&c, " ");
		y = kweb_dt_num(&c, 4);
		kweb_dt_lit(&c, " ");
		kweb_dt_time(&c, &h, &mi, &sec);
		kweb_dt_lit(&c, " GMT");
	} else if (len > 3 && s[3] == ' ') {
		/* asctime: "Sun Nov  6 08:49:37 1994" */
		kweb_dt_name(&c, kweb_dt_wday, 7);
		kweb_dt_lit(&c, " ");
		m = kweb_dt_name(&c, kweb_dt_mon, 12) + 1;
		kweb_dt_lit(&c, " ");
		if (c.i < len && s[c.i] == ' ') {
			c.i++;
			d = kweb_dt_num(&c, 1);
		} else {
			d = kweb_dt_num(&c, 2);
		}
		kweb_dt_lit(&c, " ");
		kweb_dt_time(&c, &h, &mi, &sec);
		kweb_dt_lit(&c, " ");
		y = kweb_dt_num(&c, 4);
	} else {
		/* RFC 850: "Sunday, 06-Nov-94 08:49:37 GMT" */
		kweb_dt_name(&c, kweb_dt_wday_long, 7);
		kweb_dt_lit(&c, ", ");
		d = kweb_dt_num(&c, 2);
		kweb_dt_lit(&c, "-");
		m = kweb_dt_name(&c, kweb_dt_mon, 12) + 1;
		kweb_dt_lit(&c, "-");
		y = kweb_dt_num(&c, 2);
		kweb_dt_lit(&c, " ");
		kweb_dt_time(&c, &h, &mi, &sec);
		kweb_dt_lit(&c, " GMT");
		/*
		 * RFC 9110 takes a year more than 50 years ahead to be in the
		 * past century, which needs a clock; pure code has none, so
		 * use the fixed pivot of nginx and POSIX instead.
		 */
		y += y < 70 ? 2000 : 1900;
	}

	if (c.bad || c.i != len)
		return -EINVAL;
	if (d < 1 || d > kweb_dt_mdays(y, m) || h > 23 || mi > 59 ||
	    sec > 60)
		return -EINVAL;
	*t = kweb_dt_days_from_civil(y, m, d) * KWEB_DT_DAY +
	     h * 3600 + mi * 60 + sec;
	return 0;
}
