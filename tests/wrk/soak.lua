-- SPDX-License-Identifier: GPL-2.0
-- wrk load of the soak (tests/guest/soak.sh):
--
--   wrk -t2 -c32 -dDs -s tests/wrk/soak.lua http://HOST:PORT/ -- LIST DOCROOT
--
-- LIST holds one request path per line (tests/soak.py make-files); each
-- thread walks it from its own offset, one path per request, on keep-alive
-- connections. Every file starts with a line of its own ("soak-wrk PATH
-- SIZE\n"), so a response is checked without knowing which request it
-- answers: it is good iff it is a 200 whose body is byte for byte the file
-- its first line names (read from DOCROOT at start). done() prints one line:
--
--   soak-wrk: requests=N good=N bad=N errors_connect=N errors_read=N
--     errors_write=N errors_status=N errors_timeout=N first_bad=TEXT
--
-- (one line; first_bad, the first wrong response, is last and may hold
-- spaces).

-- Each wrk thread has its own Lua state: count there, add up in done().
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

good, bad = 0, 0
first_bad = ""

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local data = f:read("*a")
  f:close()
  return data
end

function init(args)
  local list, docroot = args[1], args[2]
  reqs, want = {}, {}
  local f = assert(io.open(list, "r"))
  for line in f:lines() do
    if line ~= "" then
      table.insert(reqs, wrk.format("GET", line))
      if not want[line] then
        local data = read_file(docroot .. line)
        want[string.sub(data, 1, string.find(data, "\n", 1, true))] = data
        want[line] = true
      end
    end
  end
  f:close()
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
  local nl = string.find(body, "\n", 1, true)
  local data = nl and want[string.sub(body, 1, nl)]
  if status == 200 and data and body == data then
    good = good + 1
    return
  end
  bad = bad + 1
  if first_bad == "" then
    first_bad = string.format("status %d, %d bytes: %q", status, #body,
      string.sub(body, 1, 60))
    first_bad = string.gsub(first_bad, "\n", "\\n")
  end
end

function done(summary, latency, requests)
  local sum = { good = 0, bad = 0 }
  local first = ""
  for _, t in ipairs(threads) do
    sum.good = sum.good + (t:get("good") or 0)
    sum.bad = sum.bad + (t:get("bad") or 0)
    if first == "" then
      first = t:get("first_bad") or ""
    end
  end
  local e = summary.errors
  io.write(string.format("soak-wrk: requests=%d good=%d bad=%d errors_connect=%d "
    .. "errors_read=%d errors_write=%d errors_status=%d errors_timeout=%d "
    .. "first_bad=%s\n", summary.requests, sum.good, sum.bad, e.connect,
    e.read, e.write, e.status, e.timeout, first))
end
