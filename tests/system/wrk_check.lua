-- wrk script for the system tests: DEPTH (first argument, default 1) copies of the request
-- per write, so DEPTH > 1 pipelines; every response is checked (status 200, body EXPECT,
-- the second argument) and done() prints "checked N bad M" summed over the threads.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  local depth = tonumber(args[1]) or 1
  expect = args[2] or "Hello, World!"
  checked, bad = 0, 0
  local r = {}
  for i = 1, depth do r[i] = wrk.format() end
  batch = table.concat(r)
end

function request()
  return batch
end

function response(status, headers, body)
  checked = checked + 1
  if status ~= 200 or body ~= expect then bad = bad + 1 end
end

function done(summary, latency, requests)
  local c, b = 0, 0
  for _, t in ipairs(threads) do
    c = c + t:get("checked")
    b = b + t:get("bad")
  end
  io.write(string.format("checked %d bad %d\n", c, b))
end
