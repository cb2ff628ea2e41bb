// A JSON REST store on a real SQLite file, whose queries run on a small thread pool and are
// answered through deferred responses (response::defer): the loop never waits on the disk.
//
//   GET    /items/:id      200 {"id":N,"data":...}, or 404 {"error":"not found"}
//   GET    /items?limit=N  200 a JSON array of items by ascending id; N defaults to 20 and is
//                          capped at 100; 400 when N is not a decimal number from 1 up
//   POST   /items          the body (a JSON value, 1 byte to 64 KiB, UTF-8, nested at most 64
//                          deep) stored as an item's data: 201 with the item and a Location
//                          field; 400 on an empty, oversized, malformed or deeper body
//   DELETE /items/:id      204, or 404
//   any of these           503 {"error":"busy"} with Retry-After when 1,024 queries already
//                          wait, or when the file stays locked by another writer for 5 s
//
// Env: PORT (default 8080), DB (the database file; default items.db in the working
// directory, created if missing), POLICY (single, sharded or shared; default single).
// Ctrl-C stops. Built only where SQLite's headers are found (Debian: libsqlite3-dev).
//
// Each of the 4 pool threads owns one connection (a connection is used by one thread at a
// time) with its statements prepared once; the file is in WAL mode so readers do not wait
// for the writer, and a busy timeout lets writers queue instead of failing. JSON is neither
// parsed nor built here: SQLite's json_valid/json_object do both.
#include <skiff/skiff.hpp>

#include <sqlite3.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr std::size_t max_item_bytes = 64 * 1024;
constexpr int max_json_depth = 64;  // SQLite's json() refuses 1,000; a listed item is one deeper
constexpr long long default_limit = 20;
constexpr long max_limit = 100;
constexpr unsigned pool_threads = 4;

// One connection and its prepared statements; used by one pool thread only.
class store {
public:
    explicit store(const std::string& path) {
        if (sqlite3_open(path.c_str(), &db_) != SQLITE_OK) fail("open");
        sqlite3_busy_timeout(db_, 5000);
        exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
             "CREATE TABLE IF NOT EXISTS items(id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL)");
        get_ = prepare("SELECT json_object('id', id, 'data', json(body)) FROM items WHERE id = ?1");
        list_ = prepare("SELECT coalesce(json_group_array(json(j)), '[]') FROM "
                        "(SELECT json_object('id', id, 'data', json(body)) AS j FROM items ORDER BY id LIMIT ?1)");
        insert_ = prepare("INSERT INTO items(body) SELECT json(?1) WHERE json_valid(?1) "
                          "RETURNING id, json_object('id', id, 'data', json(body))");
        delete_ = prepare("DELETE FROM items WHERE id = ?1");
    }
    store(const store&) = delete;
    store& operator=(const store&) = delete;
    ~store() {
        for (sqlite3_stmt* s : {get_, list_, insert_, delete_}) sqlite3_finalize(s);
        sqlite3_close(db_);
    }

    void get(long long id, skiff::deferred& later) {
        sqlite3_bind_int64(get_, 1, id);
        answer_row(get_, later, 200);
    }
    void list(long limit, skiff::deferred& later) {
        sqlite3_bind_int64(list_, 1, limit);
        answer_row(list_, later, 200);
    }
    void insert(const std::string& body, skiff::deferred& later) {
        sqlite3_bind_text(insert_, 1, body.data(), static_cast<int>(body.size()), SQLITE_STATIC);
        int rc = sqlite3_step(insert_);
        long long id = rc == SQLITE_ROW ? sqlite3_column_int64(insert_, 0) : 0;
        std::string item = rc == SQLITE_ROW ? column_text(insert_, 1) : std::string();
        // With RETURNING the insert commits only when the statement is reset (or stepped to
        // its end): answer after that, or a client that reads the item at once could miss it.
        int end = sqlite3_reset(insert_);
        if (rc == SQLITE_ROW && end == SQLITE_OK) {
            later.header("Location", "/items/" + std::to_string(id));
            later.status(201).json(item);
        } else if (rc == SQLITE_DONE) {
            later.status(400).json(R"({"error":"the body is not JSON"})");
        } else {
            database_error(later);
        }
    }
    void remove(long long id, skiff::deferred& later) {
        sqlite3_bind_int64(delete_, 1, id);
        int rc = sqlite3_step(delete_);
        if (rc != SQLITE_DONE) database_error(later);
        else if (sqlite3_changes(db_) == 0) not_found(later);
        else later.status(204).end();
        sqlite3_reset(delete_);
    }

    static void not_found(skiff::deferred& later) { later.status(404).json(R"({"error":"not found"})"); }

private:
    void answer_row(sqlite3_stmt* s, skiff::deferred& later, int status) {
        int rc = sqlite3_step(s);
        if (rc == SQLITE_ROW) later.status(status).json(column_text(s, 0));
        else if (rc == SQLITE_DONE) not_found(later);
        else database_error(later);
        sqlite3_reset(s);
    }
    void database_error(skiff::deferred& later) {
        if (sqlite3_errcode(db_) == SQLITE_BUSY) {  // another writer held the file past the timeout
            later.status(503).header("Retry-After", "1").json(R"({"error":"busy"})");
            return;
        }
        std::fprintf(stderr, "sqlite_store: %s\n", sqlite3_errmsg(db_));
        later.status(500).json(R"({"error":"database error"})");
    }
    static std::string column_text(sqlite3_stmt* s, int column) {
        auto text = reinterpret_cast<const char*>(sqlite3_column_text(s, column));
        return text ? std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(s, column))) : std::string();
    }
    void exec(const char* sql) {
        if (sqlite3_exec(db_, sql, nullptr, nullptr, nullptr) != SQLITE_OK) fail(sql);
    }
    sqlite3_stmt* prepare(const char* sql) {
        sqlite3_stmt* s = nullptr;
        if (sqlite3_prepare_v2(db_, sql, -1, &s, nullptr) != SQLITE_OK) fail(sql);
        return s;
    }
    [[noreturn]] void fail(const char* what) {
        std::string message = std::string(what) + ": " + (db_ ? sqlite3_errmsg(db_) : "out of memory");
        for (sqlite3_stmt* s : {get_, list_, insert_, delete_}) sqlite3_finalize(s);
        sqlite3_close(db_);  // the destructor does not run for a constructor that threw
        throw std::runtime_error(message);
    }

    sqlite3* db_ = nullptr;
    sqlite3_stmt* get_ = nullptr;
    sqlite3_stmt* list_ = nullptr;
    sqlite3_stmt* insert_ = nullptr;
    sqlite3_stmt* delete_ = nullptr;
};

// The pool's threads and one store for each: thread i uses stores_[i] only.
class store_pool {
public:
    store_pool(const std::string& path, unsigned n) : stores_(open_stores(path, n)), threads_(n) {
        threads_.on_full([](skiff::deferred& later) {
            later.status(503).header("Retry-After", "1").json(R"({"error":"busy"})");
        });
    }

    // Runs fn(store, later) on a pool thread, with that thread's store; the answer goes back
    // through the deferred handle (a 503 from the pool when its queue is full). Skipped if the
    // client went meanwhile.
    template <class Fn>
    void submit(skiff::deferred later, Fn fn) {
        threads_.run(std::move(later), [this, fn = std::move(fn)](skiff::deferred& answer) {
            fn(*stores_[skiff::blocking_pool::worker()], answer);
        });
    }

private:
    static std::vector<std::unique_ptr<store>> open_stores(const std::string& path, unsigned n) {
        store schema(path);  // creates the file and table once, before the stores race to
        std::vector<std::unique_ptr<store>> out;
        for (unsigned i = 0; i < n; ++i) out.push_back(std::make_unique<store>(path));
        return out;
    }

    std::vector<std::unique_ptr<store>> stores_;
    skiff::blocking_pool threads_;  // after stores_: its threads are joined before the stores close
};

// UTF-8 as RFC 3629 has it (JSON text is UTF-8, RFC 8259 §8.1): no overlong forms, no
// surrogates, nothing above U+10FFFF.
bool valid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        auto c = static_cast<unsigned char>(s[i]);
        std::size_t more = c < 0x80 ? 0 : c < 0xC2 ? 4 : c < 0xE0 ? 1 : c < 0xF0 ? 2 : c < 0xF5 ? 3 : 4;
        if (more == 4 || s.size() - i <= more) return false;
        unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
        unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
        for (std::size_t k = 1; k <= more; ++k) {
            auto b = static_cast<unsigned char>(s[i + k]);
            if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return false;
        }
        i += more + 1;
    }
    return true;
}

// Whether no array or object in body nests deeper than max_json_depth (brackets inside
// strings do not count). Deeper ones SQLite would store, and then fail to list.
bool shallow_enough(std::string_view body) {
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < body.size(); ++i) {
        char c = body[i];
        if (in_string) {
            if (c == '\\') ++i;  // the escaped character
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_json_depth) return false;
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
    return true;
}

void bad_request(skiff::response& res, const char* why) {
    res.status(400).json(std::string(R"({"error":")") + why + "\"}");
}

template <class App>
void add_routes(App& app, store_pool& pool) {
    app.get("/items/:id", [&pool](skiff::request& req, skiff::response& res) {
        auto id = req.param_as<long long>("id");
        if (!id || *id < 1) return res.status(404).json(R"({"error":"not found"})");
        pool.submit(res.defer(), [id = *id](store& db, skiff::deferred& later) { db.get(id, later); });
    });
    app.get("/items", [&pool](skiff::request& req, skiff::response& res) {
        auto limit = req.has_query("limit") ? req.query_as<long long>("limit") : default_limit;
        std::string_view digits = req.query("limit");
        bool huge = !limit && !digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos &&
                    digits.find_first_not_of('0') != std::string_view::npos;  // past long long: capped too
        if (huge) limit = max_limit;
        if (!limit || *limit < 1) return bad_request(res, "limit is a number from 1");
        long capped = static_cast<long>(*limit < max_limit ? *limit : max_limit);
        pool.submit(res.defer(), [capped](store& db, skiff::deferred& later) { db.list(capped, later); });
    });
    app.post("/items", [&pool](skiff::request& req, skiff::response& res) {
        if (req.body().empty()) return bad_request(res, "the body is empty");
        if (req.body().size() > max_item_bytes) return bad_request(res, "the body is over 64 KiB");
        // What SQLite's json_valid lets through but this store must not: a NUL (SQLite reads
        // text up to it and would drop the rest), bytes that are not UTF-8, and deep nesting.
        if (req.body().find('\0') != std::string_view::npos || !valid_utf8(req.body()))
            return bad_request(res, "the body is not JSON");
        if (!shallow_enough(req.body())) return bad_request(res, "the body nests deeper than 64");
        pool.submit(res.defer(), [body = std::string(req.body())](store& db, skiff::deferred& later) {
            db.insert(body, later);
        });
    });
    app.del("/items/:id", [&pool](skiff::request& req, skiff::response& res) {
        auto id = req.param_as<long long>("id");
        if (!id || *id < 1) return res.status(404).json(R"({"error":"not found"})");
        pool.submit(res.defer(), [id = *id](store& db, skiff::deferred& later) { db.remove(id, later); });
    });
}

template <class Policy>
int serve(std::uint16_t port, const std::string& path) {
    store_pool pool(path, pool_threads);  // outlives the server: late answers are no-ops
    skiff::options opt;
    opt.workers = 2;
    skiff::basic_server<Policy> app(opt);
    add_routes(app, pool);
    if (auto ec = app.listen(port)) {
        std::fprintf(stderr, "sqlite_store: cannot listen on 127.0.0.1:%u: %s\n", port, ec.message().c_str());
        return 1;
    }
    skiff::stop_on_signals stopper(app);  // SIGINT, SIGTERM: stop; declared after app, so it goes first
    std::printf("sqlite_store: serving http://127.0.0.1:%u/ from %s\n", app.port(), path.c_str());
    std::fflush(stdout);
    return app.run();
}

} // namespace

int main() {
    auto port_or_none = skiff::port_from_env("PORT", 8080);
    if (!port_or_none) {
        std::fprintf(stderr, "sqlite_store: PORT must be a number from 0 to 65535\n");
        return 1;
    }
    std::uint16_t port = *port_or_none;
    std::string path = std::getenv("DB") ? std::getenv("DB") : "items.db";
    std::string policy = std::getenv("POLICY") ? std::getenv("POLICY") : "single";
    try {
        if (policy == "sharded") return serve<skiff::sharded>(port, path);
        if (policy == "shared") return serve<skiff::shared>(port, path);
        return serve<skiff::single>(port, path);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "sqlite_store: %s: %s\n", path.c_str(), e.what());
        return 1;
    }
}
