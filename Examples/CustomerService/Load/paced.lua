-- mix.lua's requests (80% get, 10% lookup, 10% create) at a steady rate instead of as fast as the service answers:
-- make soak runs it at half the measured peak (Scripts/soak.py).
--   PACED_RATE=1500 PACED_THREADS=2 wrk -t 2 -c 64 -d 1800s --timeout 5s -s paced.lua http://127.0.0.1:PORT -- N [NONCE]
--
-- PACED_RATE    requests per second, all of wrk's threads together
-- PACED_THREADS wrk's -t (a thread's script cannot see it): each thread sends PACED_RATE / PACED_THREADS
--
-- Each thread keeps a schedule: its k-th request is due at start + k / (its share of the rate). wrk's delay() hook,
-- asked before every request of every connection, answers the milliseconds until the next free slot, so the rate
-- does not depend on the service's latency nor on delay()'s whole milliseconds (wrk truncates the answer; the next
-- slot is still one interval later, so the mean stays exact). Connections only bound what can be in flight: give
-- enough that connections / rate is well above the latency. A thread more than a second behind its schedule (the
-- service stalled, or the machine did) starts its schedule again from now rather than sending the backlog at once;
-- each restart is counted ("restarts", and "slots_skipped" the requests so never sent).
--
-- Prints, on standard error, once a second per thread: "paced thread=T responses=N ms=MONOTONIC", for a harness
-- to follow the rate while it runs; at the end, before mix.lua's JSON line, one line {"pacing": {...}}.
local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } paced_timespec;
  int clock_gettime(int clock, paced_timespec *ts);
]]
local timespec = ffi.new("paced_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, timespec) -- CLOCK_MONOTONIC
  return tonumber(timespec.tv_sec) * 1000 + tonumber(timespec.tv_nsec) / 1e6
end

dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "mix.lua")
script_name = "paced"

-- Main state: the environment checked once, so that a bad value stops wrk before it connects.
local rate, threads = tonumber(os.getenv("PACED_RATE") or ""), tonumber(os.getenv("PACED_THREADS") or "")
if rate == nil or rate <= 0 or threads == nil or threads < 1 then
  error("paced.lua needs PACED_RATE (requests per second, all threads) and PACED_THREADS (wrk's -t)")
end

-- Thread state (called by common.lua's init).
function script_init()
  interval_ms = 1000 * threads / rate
  next_slot = nil
  restarts, slots_skipped = 0, 0
  responses, reported_at = 0, 0
end

function delay()
  local now = now_ms()
  -- The threads' schedules start at random points of one interval, not all on the same millisecond.
  if next_slot == nil then next_slot = now + math.random() * interval_ms end
  local wait = next_slot - now
  if wait < -1000 then
    restarts = restarts + 1
    slots_skipped = slots_skipped + math.floor(-wait / interval_ms)
    next_slot, wait = now, 0
  end
  next_slot = next_slot + interval_ms
  return wait > 0 and wait or 0
end

function script_response(status)
  responses = responses + 1
  local now = now_ms()
  if now - reported_at >= 1000 then
    reported_at = now
    io.stderr:write(string.format("paced thread=%d responses=%d ms=%.0f\n", thread_id, responses, now))
  end
end

local mix_done = done
function done(summary, latency, requests)
  local total_restarts, total_skipped = 0, 0
  for _, thread in ipairs(threads_of_run or {}) do
    total_restarts = total_restarts + (thread:get("restarts") or 0)
    total_skipped = total_skipped + (thread:get("slots_skipped") or 0)
  end
  io.write(string.format('{"pacing":{"rate":%.1f,"threads":%d,"restarts":%d,"slots_skipped":%d}}\n',
                         rate, threads, total_restarts, total_skipped))
  mix_done(summary, latency, requests)
end

-- common.lua keeps its threads in a local table: collect them here as well, for done().
local common_setup = setup
function setup(thread)
  threads_of_run = threads_of_run or {}
  table.insert(threads_of_run, thread)
  common_setup(thread)
end
