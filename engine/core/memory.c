/* How much memory there is, and sizes written and read as people write
 * them (the front ends' --memory-limit and their messages). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tgraph/memory.h"

/* The first number in file PATH after KEY ("" : at its start); false if
 * there is none ("max" in memory.max means no limit). */
static bool
read_number (const char *path, const char *key, uint64_t *value)
{
  char line[256];
  bool found = false;
  FILE *f = fopen (path, "r");

  if (f == NULL)
    return false;
  while (!found && fgets (line, sizeof line, f))
    if (strncmp (line, key, strlen (key)) == 0)
      {
        char *end;
        errno = 0;
        unsigned long long v = strtoull (line + strlen (key), &end, 10);
        found = errno == 0 && end != line + strlen (key);
        *value = v;
      }
  fclose (f);
  return found;
}

/* What the cgroup this process is in (or the nearest parent with a
 * limit) still allows, cgroup v2 first, then v1; UINT64_MAX: no limit. */
static uint64_t
cgroup_room (void)
{
  char dir[512] = "", path[600];
  uint64_t room = UINT64_MAX, max, current;
  FILE *f = fopen ("/proc/self/cgroup", "r");

  if (f)
    {
      char line[512];
      while (fgets (line, sizeof line, f))
        if (strncmp (line, "0::", 3) == 0)
          {
            snprintf (dir, sizeof dir, "%s", line + 3);
            dir[strcspn (dir, "\n")] = '\0';
          }
      fclose (f);
    }
  /* The limit may sit on a parent (a container's root is often "/"). */
  for (;;)
    {
      snprintf (path, sizeof path, "/sys/fs/cgroup%s/memory.max", dir);
      if (read_number (path, "", &max))
        {
          snprintf (path, sizeof path, "/sys/fs/cgroup%s/memory.current", dir);
          if (!read_number (path, "", &current))
            current = 0;
          uint64_t r = max > current ? max - current : 0;
          room = r < room ? r : room;
        }
      char *slash = strrchr (dir, '/');
      if (slash == NULL || dir[0] == '\0')
        break;
      *slash = '\0';
    }
  if (room == UINT64_MAX
      && read_number ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "", &max)
      && max < ((uint64_t) 1 << 60))
    {
      if (!read_number ("/sys/fs/cgroup/memory/memory.usage_in_bytes", "", &current))
        current = 0;
      room = max > current ? max - current : 0;
    }
  return room;
}

uint64_t
tg_memory_available (void)
{
  uint64_t kib, room = cgroup_room ();
  uint64_t avail = read_number ("/proc/meminfo", "MemAvailable:", &kib) ? kib * 1024 : 0;

  if (avail == 0)
    return room == UINT64_MAX ? 0 : room;
  return room < avail ? room : avail;
}

const char *
tg_format_bytes (uint64_t bytes, char *buf, size_t size)
{
  if (bytes < 1024)
    snprintf (buf, size, "%" PRIu64 " B", bytes);
  else if (bytes < 1024ULL * 1024)
    snprintf (buf, size, "%.1f KiB", (double) bytes / 1024.0);
  else if (bytes < 1024ULL * 1024 * 1024)
    snprintf (buf, size, "%.1f MiB", (double) bytes / (1024.0 * 1024.0));
  else
    snprintf (buf, size, "%.2f GiB", (double) bytes / (1024.0 * 1024.0 * 1024.0));
  return buf;
}

int
tg_parse_bytes (const char *text, uint64_t *bytes, TgError *err)
{
  static const char units[] = "KMGT";
  const char *p = text, *u;
  char *end;
  double v;
  int shift = 0;

  if (text == NULL || !isdigit ((unsigned char) text[0]))
    goto bad;
  errno = 0;
  v = strtod (p, &end);
  if (errno != 0 || end == p)
    goto bad;
  p = end;
  if (*p && (u = strchr (units, toupper ((unsigned char) *p))) != NULL)
    {
      shift = 10 * (int) (u - units + 1);
      p++;
      if (*p == 'i' || *p == 'I')
        p++;
      if (*p == 'B' || *p == 'b')
        p++;
    }
  else if (*p == 'B' || *p == 'b')
    p++;
  if (*p != '\0' || !(v * (double) ((uint64_t) 1 << shift) < 18446744073709551615.0))
    goto bad;
  v *= (double) ((uint64_t) 1 << shift);
  if (v < 1.0)
    goto bad;
  *bytes = (uint64_t) v;
  return 0;
bad:
  return tg_error_set (err, TG_EINVAL, NULL,
                       "expected a size such as 512M, 20G or a number of bytes, got \"%s\"",
                       text ? text : "");
}
