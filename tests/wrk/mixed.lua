-- SPDX-License-Identifier: GPL-2.0
-- wrk load for the handoff tests (tests/handoff_test.py --wrk):
--
--   wrk -t2 -c32 -d10s -s tests/wrk/mixed.lua http://HOST:PORT/ -- \
--       STATIC_PATH STATIC_SIZE POST_PATH POST_SIZE EVERY
--
-- Every EVERY-th request (4) is a POST of POST_SIZE bytes to POST_PATH
-- (/dyn/load) with "Connection: close": kweb hands it to nginx, whose echo
-- answers "load method=POST length=POST_SIZE\n" and closes, so wrk
-- reconnects to kweb. The others are keep-alive GETs of STATIC_PATH
-- (/small.txt, STATIC_SIZE bytes), answered by kweb.
--
-- A response is the answer to a POST iff it carries "Connection: close"
-- (kweb's static answers keep the connection, and every answer to a POST
-- closes it, nginx's and kweb's 502/503 alike). It is good if it is a 200
-- with exactly the expected body (POST) or body size (GET). done() prints
-- one line:
--
--   handoff-wrk: static_good=N static_bad=N post_good=N post_bad=N
--     sent_static=N sent_post=N errors_connect=N errors_read=N
--     errors_write=N errors_status=N errors_timeout=N first_bad=TEXT
--
-- (one line; first_bad, the first wrong response, is last and may hold
-- spaces).

-- Each wrk thread has its own Lua state: count there, add up in done().
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  static_path = args[1] or "/small.txt"
  static_size = tonumber(args[2] or "-1")
  post_path = args[3] or "/dyn/load"
  post_size = tonumber(args[4] or "100")
  every = tonumber(args[5] or "4")
  static_req = wrk.format("GET", static_path)
  post_req = wrk.format("POST", post_path,
    { ["Connection"] = "close", ["Content-Type"] = "application/octet-stream" },
    string.rep("k", post_size))
  post_want = string.format("load method=POST length=%d\n", post_size)
  n = 0
  sent_static, sent_post = 0, 0
  static_good, static_bad, post_good, post_bad = 0, 0, 0, 0
  first_bad = ""
end

function request()
  n = n + 1
  if n % every == 0 then
    sent_post = sent_post + 1
    return post_req
  end
  sent_static = sent_static + 1
  return static_req
end

local function closes(headers)
  for name, value in pairs(headers) do
    if string.lower(name) == "connection" and
        string.find(string.lower(value), "close", 1, true) then
      return true
    end
  end
  return false
end

local function note(kind, status, body)
  if first_bad == "" then
    first_bad = string.format("%s: status %d, %d bytes: %q", kind, status, #body,
      string.sub(body, 1, 80))
    first_bad = string.gsub(first_bad, "\n", "\\n")
  end
end

function response(status, headers, body)
  if closes(headers) then
    if status == 200 and body == post_want then
      post_good = post_good + 1
    else
      post_bad = post_bad + 1
      note("POST " .. post_path, status, body)
    end
  else
    if status == 200 and #body == static_size then
      static_good = static_good + 1
    else
      static_bad = static_bad + 1
      note("GET " .. static_path, status, body)
    end
  end
end

function done(summary, latency, requests)
  local sum = { static_good = 0, static_bad = 0, post_good = 0, post_bad = 0,
    sent_static = 0, sent_post = 0 }
  local bad = ""
  for _, t in ipairs(threads) do
    for k, _ in pairs(sum) do
      sum[k] = sum[k] + (t:get(k) or 0)
    end
    if bad == "" then
      bad = t:get("first_bad") or ""
    end
  end
  local e = summary.errors
  io.write(string.format("handoff-wrk: static_good=%d static_bad=%d post_good=%d "
    .. "post_bad=%d sent_static=%d sent_post=%d errors_connect=%d errors_read=%d "
    .. "errors_write=%d errors_status=%d errors_timeout=%d first_bad=%s\n",
    sum.static_good, sum.static_bad, sum.post_good, sum.post_bad,
    sum.sent_static, sum.sent_post, e.connect, e.read, e.write, e.status,
    e.timeout, bad))
end
