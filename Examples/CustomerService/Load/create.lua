-- POST /customers, each with a new e-mail r<NONCE>t<thread>n<counter>@load.example.com.
--   wrk -t 2 -c 64 -d 10s --latency -s create.lua http://127.0.0.1:PORT -- N [NONCE]
-- (N is not used for the requests; it is echoed in the result line.)
script_name, script_needs_n = "create", false
dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "common.lua")
request = create_request
