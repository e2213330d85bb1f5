# Sourced by the bench scripts that serve a folder with nginx on loopback (bench/client,
# bench/delta, bench/delta-kept): one configuration, one access-log line per request,
# "STATUS BODY_BYTES URI "RANGE"", which the scripts count bytes and ranges from.
#
#   start_static_nginx WORK ROOT PORT LOG
#
# Writes WORK/nginx.conf, serves ROOT on 127.0.0.1:PORT, logs to LOG and sets NGINX_PID
# (the caller kills it); returns once nginx answers, and calls the caller's `die` if it
# does not (its error log then says why).
start_static_nginx() {
    local work=$1 root=$2 port=$3 log=$4 nginx
    nginx=$(command -v nginx || echo /usr/sbin/nginx)
    [[ -x $nginx ]] || die "'nginx' not found; install it (apt-get install nginx-light)"
    cat >"$work/nginx.conf" <<CONF
daemon off;
worker_processes 2;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 256; }
http {
    log_format bench '\$status \$body_bytes_sent \$request_uri "\$http_range"';
    access_log $log bench;
    sendfile on;
    default_type application/octet-stream;
    types { application/json json; }
    client_body_temp_path $work/tmp-body;
    proxy_temp_path $work/tmp-proxy;
    fastcgi_temp_path $work/tmp-fastcgi;
    uwsgi_temp_path $work/tmp-uwsgi;
    scgi_temp_path $work/tmp-scgi;
    server { listen 127.0.0.1:$port; root $root; }
}
CONF
    "$nginx" -p "$work" -c "$work/nginx.conf" -e "$work/nginx-error.log" &
    NGINX_PID=$!
    echo probe >"$root/probe"
    for _ in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/probe" && return 0; sleep 0.1; done
    die "nginx does not answer: $(cat "$work/nginx-error.log")"
}
