using HttpApi;

// samples/HttpApi: the command line of the HttpApi service (src/Manaloc.Lab.HttpApi), the minimal-API service in two
// builds, ASP.NET Core's defaults or Manaloc wired in. The lab's `http` experiment runs the same service in child
// processes of its own. `--help` lists the builds, the endpoints and the options.
return await ServiceHost.RunAsync(args);
