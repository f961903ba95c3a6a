-- KEYS: draw
-- draw_seed.lua: stores the draw's nonce (from which the instances derive
-- the seed with the deployment's secret) or, for an engine without one, the
-- seed itself, and the commitment, once: the first wins, so that the
-- published commitment never changes.
-- ARGV: 2 field ('nonce' or 'seed'), 3 its value (hex), 4 sha256(seed) (hex)
-- Reply: the commitment in force
if redis.call('HEXISTS', K.draw, 'seed') == 0 and redis.call('HEXISTS', K.draw, 'nonce') == 0 then
  redis.call('HSET', K.draw, ARGV[2], ARGV[3], 'commit', ARGV[4])
end
return redis.call('HGET', K.draw, 'commit')
