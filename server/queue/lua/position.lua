-- position.lua: a visitor's place, and (with ARGV[2] == "1") an atomic,
-- idempotent enter. Status is decided by the token first, then the queue.
-- KEYS: 1 cfg, 2 queue, 3 seq, 4 tok:<visitor>, 5 rate
-- ARGV: 1 visitor, 2 enter flag ("1" or "0")
-- Reply: {code, ticket, rank, waiting, token, ewma, rate}
--   code: -1 unknown room, 0 NOT_ENTERED, 1 WAITING, 2 READY
local rate = redis.call('HGET', KEYS[1], 'rate')
if not rate then return {-1, 0, 0, 0, '', '', ''} end
local ewma = redis.call('HGET', KEYS[5], 'ewma') or ''
local tok = redis.call('HMGET', KEYS[4], 't', 'n')
if tok[1] then
  return {2, tonumber(tok[2]) or 0, 0, redis.call('ZCARD', KEYS[2]), tok[1], ewma, rate}
end
local ticket = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not ticket then
  if ARGV[2] ~= '1' then
    return {0, 0, 0, redis.call('ZCARD', KEYS[2]), '', ewma, rate}
  end
  ticket = redis.call('INCR', KEYS[3])
  redis.call('ZADD', KEYS[2], ticket, ARGV[1])
end
local rank = redis.call('ZRANK', KEYS[2], ARGV[1])
return {1, tonumber(ticket), rank, redis.call('ZCARD', KEYS[2]), '', ewma, rate}
