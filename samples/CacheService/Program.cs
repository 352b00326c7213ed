using CacheService;

// The service: `dotnet run --project samples/CacheService` (Manaloc's tier), or with
// `--CacheService:Tier Garnet --CacheService:Garnet 127.0.0.1:6379` against a Garnet server (README.md).
var app = CacheServiceApp.Build(args);
await app.RunAsync();
