-- dbduel's TPC-C transactions as MySQL/MariaDB stored procedures: one CALL
-- a transaction, as HammerDB's TPROC-C runs them. Written from the TPC-C
-- specification's transaction profiles (clauses 2.4 to 2.8); the client
-- draws the inputs (the same draws as the statements mode) and each
-- procedure does the profile's reads and writes between START TRANSACTION
-- and COMMIT, and ends with one row: rolled_back (1 for New-Order's 1% of
-- unused items, rolled back inside). Procedures are separated by a line
-- holding only "-- next procedure".

CREATE PROCEDURE dbduel_tpcc_new_order(IN p_w INT, IN p_d INT, IN p_c INT, IN p_ol_cnt INT, IN p_all_local INT,
	IN p_items VARCHAR(255), IN p_supply VARCHAR(255), IN p_qty VARCHAR(255), IN p_entry DATETIME)
proc: BEGIN
	DECLARE v_discount DECIMAL(4,4);
	DECLARE v_last VARCHAR(16);
	DECLARE v_credit CHAR(2);
	DECLARE v_wtax, v_dtax DECIMAL(4,4);
	DECLARE v_oid, v_item, v_supply, v_qty, v_sq, i INT;
	DECLARE v_price DECIMAL(5,2);
	DECLARE v_iname VARCHAR(24);
	DECLARE v_idata, v_sdata VARCHAR(50);
	DECLARE v_dist CHAR(24);
	DECLARE v_found INT DEFAULT 1;
	DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
	START TRANSACTION;
	SELECT c_discount, c_last, c_credit, w_tax INTO v_discount, v_last, v_credit, v_wtax
		FROM customer, warehouse WHERE w_id = p_w AND c_w_id = w_id AND c_d_id = p_d AND c_id = p_c;
	SELECT d_next_o_id, d_tax INTO v_oid, v_dtax FROM district WHERE d_w_id = p_w AND d_id = p_d FOR UPDATE;
	UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = p_w AND d_id = p_d;
	INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
		VALUES (v_oid, p_d, p_w, p_c, p_entry, NULL, p_ol_cnt, p_all_local);
	INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES (v_oid, p_d, p_w);
	SET i = 1;
	WHILE i <= p_ol_cnt DO
		SET v_item = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_items, ',', i), ',', -1) AS UNSIGNED);
		SET v_supply = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_supply, ',', i), ',', -1) AS UNSIGNED);
		SET v_qty = CAST(SUBSTRING_INDEX(SUBSTRING_INDEX(p_qty, ',', i), ',', -1) AS UNSIGNED);
		SET v_found = 1;
		SELECT i_price, i_name, i_data INTO v_price, v_iname, v_idata FROM item WHERE i_id = v_item;
		IF v_found = 0 THEN
			-- Clause 2.4.2.3: an unused item number rolls the order back.
			ROLLBACK;
			SELECT 1 AS rolled_back;
			LEAVE proc;
		END IF;
		SELECT s_quantity, s_data,
			CASE p_d WHEN 1 THEN s_dist_01 WHEN 2 THEN s_dist_02 WHEN 3 THEN s_dist_03 WHEN 4 THEN s_dist_04
				WHEN 5 THEN s_dist_05 WHEN 6 THEN s_dist_06 WHEN 7 THEN s_dist_07 WHEN 8 THEN s_dist_08
				WHEN 9 THEN s_dist_09 ELSE s_dist_10 END
			INTO v_sq, v_sdata, v_dist FROM stock WHERE s_i_id = v_item AND s_w_id = v_supply FOR UPDATE;
		UPDATE stock SET s_quantity = IF(v_sq < v_qty + 10, v_sq - v_qty + 91, v_sq - v_qty), s_ytd = s_ytd + v_qty,
			s_order_cnt = s_order_cnt + 1, s_remote_cnt = s_remote_cnt + IF(v_supply <> p_w, 1, 0)
			WHERE s_i_id = v_item AND s_w_id = v_supply;
		INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
			VALUES (v_oid, p_d, p_w, i, v_item, v_supply, NULL, v_qty, v_qty * v_price, v_dist);
		SET i = i + 1;
	END WHILE;
	COMMIT;
	SELECT 0 AS rolled_back;
END
-- next procedure
CREATE PROCEDURE dbduel_tpcc_payment(IN p_w INT, IN p_d INT, IN p_cw INT, IN p_cd INT, IN p_c INT,
	IN p_by_name INT, IN p_last VARCHAR(16), IN p_amount DECIMAL(6,2), IN p_date DATETIME)
BEGIN
	DECLARE v_wname, v_dname VARCHAR(10);
	DECLARE v_street1, v_street2, v_city VARCHAR(20);
	DECLARE v_state CHAR(2);
	DECLARE v_zip CHAR(9);
	DECLARE v_cid INT DEFAULT p_c;
	DECLARE v_n INT;
	DECLARE v_credit CHAR(2);
	DECLARE v_balance DECIMAL(12,2);
	DECLARE v_data VARCHAR(500);
	START TRANSACTION;
	UPDATE warehouse SET w_ytd = w_ytd + p_amount WHERE w_id = p_w;
	SELECT w_street_1, w_street_2, w_city, w_state, w_zip, w_name INTO v_street1, v_street2, v_city, v_state, v_zip, v_wname
		FROM warehouse WHERE w_id = p_w;
	UPDATE district SET d_ytd = d_ytd + p_amount WHERE d_w_id = p_w AND d_id = p_d;
	SELECT d_street_1, d_street_2, d_city, d_state, d_zip, d_name INTO v_street1, v_street2, v_city, v_state, v_zip, v_dname
		FROM district WHERE d_w_id = p_w AND d_id = p_d;
	IF p_by_name = 1 THEN
		-- Clause 2.5.2.2: the middle one of the customers with that last
		-- name, sorted by first name (the client's id when there is none).
		SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_last;
		IF v_n > 0 THEN
			SET v_n = (v_n + 1) DIV 2 - 1;
			SELECT c_id INTO v_cid FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_last = p_last
				ORDER BY c_first LIMIT v_n, 1;
		END IF;
	END IF;
	SELECT c_credit, c_balance INTO v_credit, v_balance FROM customer
		WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid FOR UPDATE;
	IF v_credit = 'BC' THEN
		SELECT c_data INTO v_data FROM customer WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid;
		UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
			c_payment_cnt = c_payment_cnt + 1,
			c_data = LEFT(CONCAT(v_cid, ' ', p_cd, ' ', p_cw, ' ', p_d, ' ', p_w, ' ', p_amount, '|', v_data), 500)
			WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid;
	ELSE
		UPDATE customer SET c_balance = c_balance - p_amount, c_ytd_payment = c_ytd_payment + p_amount,
			c_payment_cnt = c_payment_cnt + 1
			WHERE c_w_id = p_cw AND c_d_id = p_cd AND c_id = v_cid;
	END IF;
	INSERT INTO history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data)
		VALUES (p_cd, p_cw, v_cid, p_d, p_w, p_date, p_amount, CONCAT(v_wname, '    ', v_dname));
	COMMIT;
	SELECT 0 AS rolled_back;
END
-- next procedure
CREATE PROCEDURE dbduel_tpcc_order_status(IN p_w INT, IN p_d INT, IN p_c INT, IN p_by_name INT, IN p_last VARCHAR(16))
BEGIN
	DECLARE v_cid INT DEFAULT p_c;
	DECLARE v_n, v_oid INT;
	DECLARE v_balance DECIMAL(12,2);
	DECLARE v_first VARCHAR(16);
	DECLARE v_middle CHAR(2);
	DECLARE v_last VARCHAR(16);
	DECLARE v_carrier INT;
	DECLARE v_entry DATETIME;
	DECLARE v_lines INT;
	DECLARE v_qty DECIMAL(12,2);
	DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_oid = NULL;
	START TRANSACTION;
	IF p_by_name = 1 THEN
		SELECT COUNT(*) INTO v_n FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last;
		IF v_n > 0 THEN
			SET v_n = (v_n + 1) DIV 2 - 1;
			SELECT c_id INTO v_cid FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_last = p_last
				ORDER BY c_first LIMIT v_n, 1;
		END IF;
	END IF;
	SELECT c_balance, c_first, c_middle, c_last INTO v_balance, v_first, v_middle, v_last
		FROM customer WHERE c_w_id = p_w AND c_d_id = p_d AND c_id = v_cid;
	SET v_oid = NULL;
	SELECT o_id, o_carrier_id, o_entry_d INTO v_oid, v_carrier, v_entry FROM orders
		WHERE o_w_id = p_w AND o_d_id = p_d AND o_c_id = v_cid ORDER BY o_id DESC LIMIT 1;
	IF v_oid IS NOT NULL THEN
		SELECT COUNT(*), SUM(ol_quantity) INTO v_lines, v_qty FROM order_line
			WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id = v_oid;
	END IF;
	COMMIT;
	SELECT 0 AS rolled_back;
END
-- next procedure
CREATE PROCEDURE dbduel_tpcc_delivery(IN p_w INT, IN p_carrier INT, IN p_date DATETIME)
BEGIN
	-- All ten districts in one transaction, as HammerDB runs it.
	DECLARE d INT DEFAULT 1;
	DECLARE v_oid, v_cid INT;
	DECLARE v_sum DECIMAL(12,2);
	DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_oid = NULL;
	START TRANSACTION;
	WHILE d <= 10 DO
		SET v_oid = NULL;
		SELECT no_o_id INTO v_oid FROM new_order WHERE no_w_id = p_w AND no_d_id = d ORDER BY no_o_id LIMIT 1 FOR UPDATE;
		IF v_oid IS NOT NULL THEN
			DELETE FROM new_order WHERE no_w_id = p_w AND no_d_id = d AND no_o_id = v_oid;
			SELECT o_c_id INTO v_cid FROM orders WHERE o_w_id = p_w AND o_d_id = d AND o_id = v_oid;
			UPDATE orders SET o_carrier_id = p_carrier WHERE o_w_id = p_w AND o_d_id = d AND o_id = v_oid;
			UPDATE order_line SET ol_delivery_d = p_date WHERE ol_w_id = p_w AND ol_d_id = d AND ol_o_id = v_oid;
			SELECT COALESCE(SUM(ol_amount), 0) INTO v_sum FROM order_line WHERE ol_w_id = p_w AND ol_d_id = d AND ol_o_id = v_oid;
			UPDATE customer SET c_balance = c_balance + v_sum, c_delivery_cnt = c_delivery_cnt + 1
				WHERE c_w_id = p_w AND c_d_id = d AND c_id = v_cid;
		END IF;
		SET d = d + 1;
	END WHILE;
	COMMIT;
	SELECT 0 AS rolled_back;
END
-- next procedure
CREATE PROCEDURE dbduel_tpcc_stock_level(IN p_w INT, IN p_d INT, IN p_threshold INT)
BEGIN
	DECLARE v_next, v_low INT;
	START TRANSACTION;
	SELECT d_next_o_id INTO v_next FROM district WHERE d_w_id = p_w AND d_id = p_d;
	SELECT COUNT(DISTINCT s_i_id) INTO v_low FROM order_line, stock
		WHERE ol_w_id = p_w AND ol_d_id = p_d AND ol_o_id < v_next AND ol_o_id >= v_next - 20
		AND s_w_id = p_w AND s_i_id = ol_i_id AND s_quantity < p_threshold;
	COMMIT;
	SELECT 0 AS rolled_back;
END
