-- KEYS: draw
-- draw_seed.lua: stores the draw's seed and its commitment, once: the
-- first seed wins, so that the published commitment never changes.
-- ARGV: 2 seed (hex), 3 sha256(seed) (hex)
-- Reply: the commitment in force
if redis.call('HEXISTS', K.draw, 'seed') == 0 then
  redis.call('HSET', K.draw, 'seed', ARGV[2], 'commit', ARGV[3])
end
return redis.call('HGET', K.draw, 'commit')
