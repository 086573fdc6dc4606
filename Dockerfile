# Builds the single scalwsd executable, then ships it on a small base image as a non-root user.
# `deno compile` downloads the Deno runtime: the build stage needs network access.
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
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 scalws \
 && useradd --system --uid 10001 --gid 10001 --no-create-home --shell /usr/sbin/nologin scalws \
 && mkdir -p /etc/scalws /run/scalws /var/lib/scalws \
 && chown scalws:scalws /run/scalws /var/lib/scalws
COPY --from=build /src/scalwsd /usr/local/bin/scalwsd
COPY examples/scalwsd.yaml /etc/scalws/scalws.example.yaml
ENV DENO_TLS_CA_STORE=system DENO_DIR=/tmp/deno
USER 10001:10001
EXPOSE 8080 8443 9090
ENTRYPOINT ["/usr/local/bin/scalwsd"]
CMD ["run", "--config", "/etc/scalws/scalws.yaml"]
