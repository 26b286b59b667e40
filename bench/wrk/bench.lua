-- SPDX-License-Identifier: GPL-2.0
-- wrk script of `make bench` (bench/guest.py):
--
--   wrk -t2 -cN -dDs -s bench/wrk/bench.lua http://HOST:PORT/ -- LIST MODE
--       [CODING LENGTH]
--
-- LIST holds one request path per line. With a single path the request is
-- static (wrk formats it once, as without a script); with several, each
-- thread walks the list from its own offset, one path per request.
--
-- MODE "check": every response is checked. Every file bench/guest.py
-- makes starts with its own size in 8 decimal digits, so a response can
-- be checked without knowing which request it answers: it is good iff it
-- is a 200 whose body is exactly as long as its first 8 bytes say.
-- MODE "count" (the timed runs): no response() hook, because with one wrk
-- keeps every body and copies it into Lua, which costs the load tool more
-- than a server serving 64 KiB or 1 MiB files (measured against nginx:
-- 1 MiB responses/s halved, 800 times the page faults); bench/guest.py
-- then checks wrk's own error counts and the bytes read against the
-- responses' known lengths. CODING (gzip) goes in an Accept-Encoding
-- field of every request; the precompressed file that answers does not
-- start with its size, so a good response is then a 200 of LENGTH bytes.
-- done() prints one line:
--
--   bench-wrk: mode=MODE requests=N good=N bad=N body_bytes=N bytes=N
--     runtime_us=N errors_connect=N errors_read=N errors_write=N
--     errors_status=N errors_timeout=N first_bad=TEXT
--
-- (one line; first_bad, the first wrong response, is last and may hold
-- spaces). good, bad and body_bytes (the bodies of the good responses)
-- are 0 when counting; bytes is all that wrk read, heads and the
-- responses cut off at the end included; errors_status counts statuses
-- from 400 on (wrk's own count).

-- Each wrk thread has its own Lua state: count there, add up in done().
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

good, bad, body_bytes = 0, 0, 0
first_bad = ""

function init(args)
  local list = args[1]
  mode = args[2] or "check"
  if args[3] then
    wrk.headers["Accept-Encoding"] = args[3]
    fixed_len = tonumber(args[4])
  end
  if mode ~= "check" then
    response = nil
  end
  local paths = {}
  if list then
    local f = assert(io.open(list, "r"))
    for line in f:lines() do
      if line ~= "" then
        table.insert(paths, line)
      end
    end
    f:close()
  end
  if #paths <= 1 then
    -- Static: wrk.init formats wrk.path once, after this.
    if #paths == 1 then
      wrk.path = paths[1]
    end
    request = nil
    return
  end
  reqs = {}
  for i, p in ipairs(paths) do
    reqs[i] = wrk.format("GET", p)
  end
  -- Threads start far apart in the list (id is set by setup()).
  pos = ((id or 0) * 7919) % #reqs
end

function request()
  pos = pos + 1
  if pos > #reqs then
    pos = 1
  end
  return reqs[pos]
end

function response(status, headers, body)
  local n = fixed_len or tonumber(string.sub(body, 1, 8))
  if status == 200 and n == #body then
    good = good + 1
    body_bytes = body_bytes + n
  else
    bad = bad + 1
    if first_bad == "" then
      first_bad = string.format("status %d, %d bytes: %q", status, #body,
        string.sub(body, 1, 60))
      first_bad = string.gsub(first_bad, "\n", "\\n")
    end
  end
end

function done(summary, latency, requests)
  local sum = { good = 0, bad = 0, body_bytes = 0 }
  local fb = ""
  for _, t in ipairs(threads) do
    for k, _ in pairs(sum) do
      sum[k] = sum[k] + (t:get(k) or 0)
    end
    if fb == "" then
      fb = t:get("first_bad") or ""
    end
  end
  local e = summary.errors
  io.write(string.format("bench-wrk: mode=%s requests=%d good=%d bad=%d "
    .. "body_bytes=%.0f bytes=%.0f runtime_us=%d errors_connect=%d "
    .. "errors_read=%d "
    .. "errors_write=%d errors_status=%d errors_timeout=%d first_bad=%s\n",
    threads[1] and threads[1]:get("mode") or "?", summary.requests,
    sum.good, sum.bad, sum.body_bytes, summary.bytes,
    summary.duration,
    e.connect, e.read, e.write, e.status, e.timeout, fb))
end
