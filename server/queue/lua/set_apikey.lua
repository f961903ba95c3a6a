-- KEYS: cfg
-- set_apikey.lua: sets a room's API key hash (ARGV[2], hex SHA-256) in its
-- own cfg field, "apikey", that no settings save writes. Returns 1, or -1
-- for an unknown room (no cfg hash is made for it).
if redis.call('EXISTS', K.cfg) == 0 then return -1 end
redis.call('HSET', K.cfg, 'apikey', ARGV[2])
return 1
