-- GET /customers?email=customer{random in 1..N}@example.com (the blind index on Strongroom).
--   wrk -t 2 -c 64 -d 10s --latency -s lookup.lua http://127.0.0.1:PORT -- N
script_name, script_needs_n = "lookup", true
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
request = lookup_request
