# Builds the single scalwsd executable and ships it on a small base image.
FROM denoland/deno:2.9.6 AS build
WORKDIR /src
COPY deno.json deno.lock ./
COPY main.ts ./
COPY cli ./cli
COPY src ./src
COPY admin ./admin
RUN deno task compile

FROM debian:bookworm-slim
RUN apt-get update && apt-get install -y --no-install-recommends ca-certificates \
 && rm -rf /var/lib/apt/lists/* && mkdir -p /etc/scalws /run/scalws
COPY --from=build /src/scalwsd /usr/local/bin/scalwsd
COPY examples/scalwsd.yaml /etc/scalws/scalws.example.yaml
ENV DENO_TLS_CA_STORE=system
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/scalwsd"]
CMD ["run", "--config", "/etc/scalws/scalws.yaml"]
