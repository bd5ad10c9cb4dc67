-- Seeds exactly N customers, customer1..customerN@example.com, one at a time
-- (one thread, one connection: no request is in flight when it ends), then
-- prints one JSON line and exits at once. On a new database their ids are
-- 1..N, which the other scripts ask for.
--   wrk -t 1 -c 1 -d 600s -s seed.lua http://127.0.0.1:PORT -- N
-- (-d only bounds it: it exits after the N-th answer. wrk's own summary is
-- not printed.)
script_name, script_needs_n, script_needs_response = "seed", true, true
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")

function script_init()
  seed_done = 0
end

-- Customer K is the one after the K-1 answered: with one connection each
-- request is built after the previous answer. (Not a counter of calls: wrk
-- calls request() once more, before the run, to look at the request, and
-- drops it; a counter would start at customer2.)
function request()
  local k = seed_done + 1
  sent.create = sent.create + 1
  return wrk.format("POST", "/customers", { ["Content-Type"] = "application/json" },
                    create_body("customer" .. k .. "@example.com", k))
end

function script_response(status)
  seed_done = seed_done + 1
  if seed_done >= seeded then
    local codes, non2xx = {}, 0
    for code, n in pairs(counts) do
      table.insert(codes, string.format('"%d":%d', code, n))
      if code < 200 or code > 299 then non2xx = non2xx + n end
    end
    table.sort(codes)
    io.write(string.format('{"script":"seed","seeded":%d,"requests":%d,"non2xx":%d,"status":{%s}}\n',
                           seeded, seed_done, non2xx, table.concat(codes, ",")))
    io.stdout:flush()
    os.exit(non2xx == 0 and 0 or 1)
  end
end
