-- urus-bench S4 mix for wrk: 80% GET /items/:id, 15% GET /items?limit=20, 5% POST /items.
-- Ids are drawn from 1..SEEDED (the items bench_s4.py stored first). done() prints one JSON
-- line with the latency percentiles (microseconds) the socket errors and the non-2xx count.
local seeded = tonumber(os.getenv("SEEDED") or "1000")
local body = '{"name":"widget","price":12.5,"tags":["a","b"]}'

request = function()
  local r = math.random(100)
  if r <= 80 then
    return wrk.format("GET", "/items/" .. math.random(seeded))
  elseif r <= 95 then
    return wrk.format("GET", "/items?limit=20")
  end
  return wrk.format("POST", "/items", {["Content-Type"] = "application/json"}, body)
end

done = function(summary, latency)
  io.write(string.format('S4 {"requests":%d,"seconds":%.3f,"p50_us":%d,"p99_us":%d,"p999_us":%d,"max_us":%d,"errors":%d,"non2xx":%d}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50), latency:percentile(99),
    latency:percentile(99.9), latency.max,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout, summary.errors.status))
end
