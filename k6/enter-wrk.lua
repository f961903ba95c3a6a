-- enter-wrk.lua: wrk's request for k6/enter-wrk.sh. Every request is a bare
-- POST without a cookie, so that each one enters a new visitor, and without
-- a body, Origin or Sec-Fetch-Site, as a non-browser client sends it (the
-- cross-site guard lets such a request through: web/crossorigin.go).
wrk.method = "POST"
wrk.headers["Accept"] = "application/json"
