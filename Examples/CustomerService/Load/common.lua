-- Shared by mix.lua, get.lua, lookup.lua, create.lua and seed.lua (wrk 4, LuaJIT):
-- the arguments, a unique e-mail per created customer, status counts, and the
-- one JSON line that done() prints for a harness to parse.
--
-- Arguments after wrk's "--": N [NONCE]
--   N      the seeded customers: ids 1..N and e-mails customer1..customerN@example.com
--   NONCE  makes this run's new e-mails unique across runs (else $LOAD_NONCE,
--          else 8 random hex digits read from /dev/urandom in setup())
-- $LOAD_SHOW_ERRORS=K prints the first K non-2xx answers of each thread (status, body) on stderr.
-- $LOAD_STATUS=0 leaves response() out (wrk then skips parsing headers and
-- bodies): non-2xx answers are then only those wrk counts itself (status > 399).

local threads = {}
local next_id = 1

local function random_hex()
  local f = io.open("/dev/urandom", "rb")
  if not f then return string.format("%08x", os.time() % 0xffffffff) end
  local bytes = f:read(4)
  f:close()
  return (bytes:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

local main_nonce = nil

-- Main state: one call per wrk thread, before any starts.
function setup(thread)
  main_nonce = main_nonce or os.getenv("LOAD_NONCE") or random_hex()
  thread:set("thread_id", next_id)
  thread:set("run_nonce", main_nonce)
  table.insert(threads, thread)
  next_id = next_id + 1
end

-- Thread state.
function init(args)
  seeded = tonumber(args[1] or "")
  if script_needs_n and (seeded == nil or seeded < 1) then
    error(script_name .. ".lua needs the seeded count: wrk ... -s " .. script_name .. ".lua -- N [NONCE]")
  end
  seeded = seeded or 0
  if args[2] and args[2] ~= "" then run_nonce = args[2] end
  -- e-mails of customers created by this thread: r<nonce>t<thread>n<counter>@load.example.com
  prefix = "r" .. run_nonce .. "t" .. thread_id .. "n"
  created_counter = 0
  math.randomseed(thread_id * 7919 + 17)
  counts = {}      -- status code -> responses
  sent = { get = 0, lookup = 0, create = 0 }
  if os.getenv("LOAD_STATUS") == "0" and not script_needs_response then response, counts = nil, nil end
  if script_init then script_init() end
end

local shown = 0
local show_errors = tonumber(os.getenv("LOAD_SHOW_ERRORS") or "0") or 0

function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
  -- $LOAD_SHOW_ERRORS=K: the first K non-2xx answers of each thread, on stderr.
  if (status < 200 or status > 299) and shown < show_errors then
    shown = shown + 1
    io.stderr:write(string.format("thread %d: %d %s\n", thread_id, status, body or ""))
  end
  if script_response then script_response(status) end
end

-- Requests, built as a user's client would send them.
local json_headers = { ["Content-Type"] = "application/json" }
NOTE = "Prefers e-mail; ordered twice in spring; asked about invoices for the Lisbon office. Load test."
local countries = { "Portugal", "France", "Germany", "Brazil", "Japan", "Kenya", "Canada", "India" }

function get_request()
  sent.get = sent.get + 1
  return wrk.format("GET", "/customers/" .. math.random(seeded))
end

function lookup_request()
  sent.lookup = sent.lookup + 1
  return wrk.format("GET", "/customers?email=customer" .. math.random(seeded) .. "@example.com")
end

function create_body(email, n)
  return '{"name":"Customer ' .. n .. '","email":"' .. email .. '","note":"' .. NOTE ..
         '","country":"' .. countries[(n % #countries) + 1] .. '"}'
end

function create_request()
  sent.create = sent.create + 1
  created_counter = created_counter + 1
  local email = prefix .. created_counter .. "@load.example.com"
  return wrk.format("POST", "/customers", json_headers, create_body(email, created_counter))
end

local function json_string(s) return '"' .. tostring(s):gsub('[%c"\\]', "") .. '"' end

-- Main state: every thread's counts added up, one JSON line on stdout.
function done(summary, latency, requests)
  local status, responses, non2xx, counted = {}, 0, 0, false
  local totals = { get = 0, lookup = 0, create = 0 }
  for _, thread in ipairs(threads) do
    local c = thread:get("counts")
    if c then
      counted = true
      for code, n in pairs(c) do
        status[code] = (status[code] or 0) + n
        responses = responses + n
        if code < 200 or code > 299 then non2xx = non2xx + n end
      end
    end
    local s = thread:get("sent")
    if s then for k, n in pairs(s) do totals[k] = totals[k] + n end end
  end
  local e = summary.errors
  if not counted then non2xx = e.status end -- LOAD_STATUS=0: wrk's own count (> 399)
  local seconds = summary.duration / 1e6
  local codes = {}
  for code, n in pairs(status) do table.insert(codes, string.format('"%d":%d', code, n)) end
  table.sort(codes)
  local p = function(q) return latency:percentile(q) end
  local line = string.format(
    '{"script":%s,"nonce":%s,"seeded":%d,"threads":%d,"seconds":%.3f,"requests":%d,"requests_per_s":%.1f,' ..
    '"latency_us":{"p50":%d,"p90":%d,"p99":%d,"p999":%d,"max":%d,"mean":%.1f,"stdev":%.1f},' ..
    '"non2xx":%d,"status_counted":%s,"status":{%s},"socket_errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d},' ..
    '"sent":{"get":%d,"lookup":%d,"create":%d}}',
    json_string(script_name), json_string(threads[1] and threads[1]:get("run_nonce") or ""),
    threads[1] and (threads[1]:get("seeded") or 0) or 0, #threads,
    seconds, summary.requests, summary.requests / seconds,
    p(50), p(90), p(99), p(99.9), latency.max, latency.mean, latency.stdev,
    non2xx, tostring(counted), table.concat(codes, ","), e.connect, e.read, e.write, e.timeout,
    totals.get, totals.lookup, totals.create)
  local problems = non2xx + e.connect + e.read + e.write + e.timeout
  if problems > 0 then
    io.write(string.format("LOAD ERRORS: %d non-2xx responses, %d connect, %d read, %d write, %d timeout errors\n",
                           non2xx, e.connect, e.read, e.write, e.timeout))
  end
  io.write(line, "\n")
end
