# Sourced: builds internal/tools/mongo-test-server (its own module: FerretDB stays
# out of dbduel's go.mod) into the tools cache, once per source version, and
# sets mongo_test_server to the binary's path. Static (no cgo) so the same
# binary runs inside the mongo-compat image.
mongo_test_server_bin() {
	local src="$here/../internal/tools/mongo-test-server" tools="${DBDUEL_TOOLS:-$HOME/.cache/dbduel/tools}" sum
	sum=$(cat "$src"/*.go "$src/go.mod" "$src/go.sum" | sha256sum | cut -c1-12)
	mongo_test_server="$tools/mongo-test-server-$sum"
	. "$here/lib/safedir.sh"
	safe_dir "$tools" || exit 1 # root runs what it holds
	if [ ! -x "$mongo_test_server" ]; then
		echo "building mongo-test-server (FerretDB embedded; about a minute the first time)" >&2
		(cd "$src" && CGO_ENABLED=0 go build -trimpath -o "$mongo_test_server.tmp" .) >&2
		mv "$mongo_test_server.tmp" "$mongo_test_server"
	fi
}
